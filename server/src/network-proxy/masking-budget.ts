/**
 * Masking a start would cost more than its budget, or could not mask a
 * credential it found: the start is refused (LimitExceeded), never run with
 * a credential unmasked. Apart so that the broker and the custom providers'
 * compiler (which loads re2js) can both throw it without importing each other.
 */
export class MaskingBudgetExceeded extends Error {}

/**
 * Characters one start may draw for custom providers' placeholders, every
 * attempt counted: randexp draws about a character a microsecond on the
 * benchmark VM, so about a quarter second when used up; 256 credentials of
 * a hundred characters drawn twice each fit.
 */
const PLACEHOLDER_DRAW_BUDGET = 256 * 1024;

/** What one start's placeholder draws have left. */
export class DrawBudget {
  private left = PLACEHOLDER_DRAW_BUDGET;

  spend(characters: number): void {
    this.left -= characters;
    if (this.left < 0) throw new MaskingBudgetExceeded(`drawing placeholders took more than ${PLACEHOLDER_DRAW_BUDGET} characters; at most that per process start`);
  }
}

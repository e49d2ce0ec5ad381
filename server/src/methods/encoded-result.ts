/**
 * A result already written as JSON, for an answer many requests share
 * (process/list answered from one host listing): the reply carries its text
 * as it is, instead of the same value being stringified again for each
 * request. `T` is the result it encodes, so handlers stay typed.
 */
export class EncodedResult<T> {
  /** Only for the type: what `json` is the text of. */
  declare private readonly encodes?: T;

  private constructor(readonly json: string) {}

  static of<T>(value: T): EncodedResult<T> {
    return new EncodedResult<T>(JSON.stringify(value));
  }
}

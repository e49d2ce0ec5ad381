/**
 * What a capture runs in place of the client's `-lc` script, per shell. The
 * login shell has already read its profile by then; the script reads the
 * file an interactive shell would read as well (~/.bashrc unless BASH_ENV
 * did that, $ZDOTDIR/.zshrc or ~/.zshrc, $ENV for sh), then prints, after
 * a marker (so whatever the startup files printed is dropped):
 *
 *   <state> NUL <env -0 output> END-MARKER
 *
 * The state is shell text a replay evaluates: the shell options, the
 * functions, the `set -o` options that are on, and the aliases, in the order
 * and with the quirks upstream's capture has (an sh capture drops its
 * aliases first, and has no functions unless it is bash or ksh underneath),
 * so a replayed command behaves as it does against upstream. Only builtins
 * run after the startup files, so a profile that changes PATH cannot break
 * the capture; `env` is looked up again on the standard PATH if the profile
 * lost it.
 */
export type SnapshotShell = "bash" | "zsh" | "sh";

export const STATE_MARKER = "\0EXECMUX_SHELL_SNAPSHOT\0";
export const END_MARKER = "\0EXECMUX_SHELL_SNAPSHOT_END\0";

const MARK_STATE = `printf '\\0%s\\0' EXECMUX_SHELL_SNAPSHOT`;
const MARK_END = `printf '\\0%s\\0' EXECMUX_SHELL_SNAPSHOT_END`;

/** The environment, NUL-separated; `env` resolved on the standard PATH when the profile's PATH lacks it. */
const PRINT_ENVIRONMENT = [
  `__execmux_env=$(command -v env 2>/dev/null) || __execmux_env=$(PATH=$(command -p getconf PATH) command -v env)`,
  `"$__execmux_env" -0`,
].join("\n");

/**
 * Options and aliases go in one brace group: the replaying shell parses the
 * whole group before it runs any of it, so neither a restored option nor a
 * restored alias changes how the lines after it are read. The `case` keeps
 * the group from being empty and makes it succeed.
 */
const GROUP_OPEN = `printf '{\\n'`;
const GROUP_CLOSE = `printf "case '' in '') ;; esac\\n}\\n"`;

/** `set -o` lines for every option that is on (a tab is in IFS for bash's `name<TAB>on`). */
const ON_OPTIONS = [
  `set -o | while IFS=' \t' read -r __execmux_option __execmux_state; do`,
  `  if [ "$__execmux_state" = on ]; then printf 'set -o %s\\n' "$__execmux_option"; fi`,
  `done`,
].join("\n");

const BASH = [
  `if [ -z "\${BASH_ENV-}" ] && [ -n "\${HOME-}" ] && [ -r "$HOME/.bashrc" ]; then . "$HOME/.bashrc"; fi`,
  MARK_STATE,
  `printf '%s\\n' '# Snapshot file' 'unalias -a 2>/dev/null || true'`,
  `shopt -p || true`,
  `declare -f`,
  `printf '\\n'`,
  GROUP_OPEN,
  ON_OPTIONS,
  `\\alias -p`,
  GROUP_CLOSE,
  `printf '\\0'`,
  PRINT_ENVIRONMENT,
  MARK_END,
].join("\n");

const ZSH = [
  `if [[ -n "\${ZDOTDIR-}" ]]; then __execmux_rc=$ZDOTDIR/.zshrc`,
  `elif [[ -n "\${HOME-}" ]]; then __execmux_rc=$HOME/.zshrc`,
  `else __execmux_rc=; fi`,
  `[[ -r "$__execmux_rc" ]] && . "$__execmux_rc"`,
  MARK_STATE,
  `printf '%s\\n' '# Snapshot file' 'unalias -a 2>/dev/null || true'`,
  `functions`,
  `printf '\\n'`,
  GROUP_OPEN,
  `setopt | while read -r __execmux_option; do printf 'setopt %s\\n' "$__execmux_option"; done`,
  // Printed for a shell without RC_QUOTES: the group is parsed before it restores that option.
  `(\\setopt NO_RC_QUOTES; \\alias -L)`,
  GROUP_CLOSE,
  `printf '\\0'`,
  PRINT_ENVIRONMENT,
  MARK_END,
].join("\n");

/**
 * What an interactive sh does with $ENV, without eval: `~/`, `$NAME`,
 * `${NAME}`, `${NAME:-default}` and `${PATH%%:*}` (each alone or before
 * `/...`, a default expanded the same way) from the exported environment;
 * anything else is taken as written.
 */
const EXPAND_ENV_FILE = `__execmux_expand_env() (
  __execmux_lookup() {
    __execmux_found=$(printenv "$1" 2>/dev/null || command -p printenv "$1") || return 1
  }
  __execmux_path=$1
  case $__execmux_path in
    '~/'*) __execmux_path="\${HOME-}/\${__execmux_path#??}" ;;
    '\${PATH%%:*}'|'\${PATH%%:*}/'*) __execmux_path="\${PATH%%:*}\${__execmux_path#'\${PATH%%:*}'}" ;;
    '\${'*'}'*)
      __execmux_body=\${__execmux_path#??}
      __execmux_name=\${__execmux_body%%\\}*}
      __execmux_rest=\${__execmux_body#*\\}}
      __execmux_default=
      __execmux_has_default=
      case $__execmux_name in *:-*) __execmux_default=\${__execmux_name#*:-}; __execmux_name=\${__execmux_name%%:-*}; __execmux_has_default=1 ;; esac
      case $__execmux_name in ''|[0-9]*|*[!A-Za-z0-9_]*) ;; *)
        case $__execmux_rest in ''|/*)
          if __execmux_lookup "$__execmux_name" && { [ -n "$__execmux_found" ] || [ -z "$__execmux_has_default" ]; }; then
            __execmux_path=$__execmux_found$__execmux_rest
          elif [ -n "$__execmux_has_default" ]; then
            __execmux_path=$(__execmux_expand_env "$__execmux_default")$__execmux_rest
          fi ;;
        esac ;;
      esac ;;
    '$'*)
      __execmux_name=\${__execmux_path#?}
      __execmux_name=\${__execmux_name%%/*}
      case $__execmux_name in ''|[0-9]*|*[!A-Za-z0-9_]*) ;; *)
        if __execmux_lookup "$__execmux_name"; then
          case $__execmux_path in */*) __execmux_path=$__execmux_found/\${__execmux_path#*/} ;; *) __execmux_path=$__execmux_found ;; esac
        fi ;;
      esac ;;
  esac
  printf '%s' "$__execmux_path"
)`;

const SH = [
  EXPAND_ENV_FILE,
  `if [ -n "\${ENV-}" ]; then`,
  `  __execmux_file=$(__execmux_expand_env "$ENV")`,
  `  if [ -r "$__execmux_file" ] && [ ! -d "$__execmux_file" ]; then`,
  `    case $__execmux_file in /*) . "$__execmux_file" ;; *) . "./$__execmux_file" ;; esac`,
  `  fi`,
  `  unset __execmux_file`,
  `fi`,
  `unset -f __execmux_expand_env`,
  MARK_STATE,
  `printf '%s\\n' '# Snapshot file'`,
  `if [ -n "\${BASH_VERSINFO-}" ]; then shopt -p || true; fi`,
  // As upstream's capture does: aliases are dropped here, so an sh snapshot has none.
  `unalias -a 2>/dev/null || true`,
  `if command -v typeset >/dev/null 2>&1; then typeset -f; elif command -v declare >/dev/null 2>&1; then declare -f; fi`,
  `printf '\\n'`,
  // POSIX sh replays by eval, line by line: no group (upstream's form for sh).
  `if set -o >/dev/null 2>&1; then`,
  ON_OPTIONS,
  `fi`,
  `if alias >/dev/null 2>&1; then alias; fi`,
  `printf '\\0'`,
  PRINT_ENVIRONMENT,
  MARK_END,
].join("\n");

export function captureScript(shell: SnapshotShell): string {
  switch (shell) {
    case "bash":
      return BASH;
    case "zsh":
      return ZSH;
    case "sh":
      return SH;
  }
}

import { homedir } from 'node:os';

/**
 * The spellings of a folder the worker's shell expands to the same place the gateway knows:
 * `~`, `$HOME`, `${HOME}` (the gateway's own home, the user's) and `$XDG_CONFIG_HOME`,
 * `${XDG_CONFIG_HOME}` (where the rules file lives by default; workers inherit the gateway's value).
 * The one reading of them: the danger tags, where a write lands and the words named all ask here.
 */
const HOME_SPELLING = /^(~|\$HOME|\$\{HOME\}|\$XDG_CONFIG_HOME|\$\{XDG_CONFIG_HOME\})(\/.*)?$/;

/**
 * `target` as an absolute path when it starts with a home spelling (`~/x`, `$HOME/x`,
 * `$XDG_CONFIG_HOME/chatty/x`); undefined for any other spelling. An unset `$XDG_CONFIG_HOME`
 * expands to nothing, as the shell does (`$XDG_CONFIG_HOME/x` is `/x`).
 */
export function fromHome(target: string): string | undefined {
  const m = HOME_SPELLING.exec(target);
  if (!m) return undefined;
  const base = m[1]!.includes('XDG') ? (process.env['XDG_CONFIG_HOME'] ?? '') : homedir();
  const path = `${base}${m[2] ?? ''}`;
  return path === '' ? undefined : path;
}

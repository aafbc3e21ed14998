/**
 * What of a tmux line the reading cannot follow: tmux is a command language of its own, and many
 * of its commands run a command line, or type into a shell, at a later moment or from text the
 * reading never sees (tmux 3.3a). `wrapper-values.ts` reads the lines `new`, `neww`, `splitw`,
 * `respawnp`, `respawnw`, `popup`, `run`, `if` and `pipep` run; a line holding any of these is
 * `unread-landing` instead (what it runs could be anything: no rule approves it, nothing is offered
 * to remember, the person is asked):
 * - a command that runs or types commands later or elsewhere: `send-keys` (`tmux neww \; send 'rm
 *   -rf ~' Enter` types into the new window's shell), `paste-buffer` and the buffers it pastes
 *   (`set-buffer`, `load-buffer`), `bind-key`, `set-hook`, `command-prompt`, `confirm-before`,
 *   `display-menu`, `display-panes`, `choose-*`, `set-option` (`default-command`, a status line's
 *   `#(…)`, `command-alias`), `set-environment` (`BASH_ENV` of the next shell), `source-file`,
 *   `detach-client -E`, and `save-buffer` (writes a file the reading does not place);
 * - a format (`#(…)` runs a shell command wherever tmux expands a format: `run '#(…)'`, `neww -n
 *   '#(…)'`, `-c`, `-F`; `#{E:…}` expands an option's value as a format);
 * - a configuration file (`-f file`, but `/dev/null`), or control mode (`-C`, `-CC`): tmux commands
 *   read from its input, one a line (`printf 'run-shell …' | tmux -C attach`, `tmux -C attach < cmds`);
 * - a command string tmux parses itself (`if`'s commands, `run -C`) holding its parser's own
 *   escapes, variables or blocks (`\`, `$`, `{`, `%`): the shell reading of it does not make them
 *   what tmux makes them (`$X` is the value in tmux's own environment).
 * Commands are found as tmux finds them: its default aliases (`splitp`, `split-pane`), an alias, a
 * full name, or a prefix only one full name has; an unknown or ambiguous name runs nothing.
 */
import { ownEntry } from './own-entry.js';

/** tmux 3.3a's commands and their aliases (`tmux list-commands`). */
const TMUX_TABLE: Readonly<Record<string, string>> = {
  'attach-session': 'attach', 'bind-key': 'bind', 'break-pane': 'breakp', 'capture-pane': 'capturep', 'choose-buffer': '', 'choose-client': '', 'choose-tree': '',
  'clear-history': 'clearhist', 'clear-prompt-history': 'clearphist', 'clock-mode': '', 'command-prompt': '', 'confirm-before': 'confirm', 'copy-mode': '',
  'customize-mode': '', 'delete-buffer': 'deleteb', 'detach-client': 'detach', 'display-menu': 'menu', 'display-message': 'display', 'display-popup': 'popup',
  'display-panes': 'displayp', 'find-window': 'findw', 'has-session': 'has', 'if-shell': 'if', 'join-pane': 'joinp', 'kill-pane': 'killp', 'kill-server': '',
  'kill-session': '', 'kill-window': 'killw', 'last-pane': 'lastp', 'last-window': 'last', 'link-window': 'linkw', 'list-buffers': 'lsb', 'list-clients': 'lsc',
  'list-commands': 'lscm', 'list-keys': 'lsk', 'list-panes': 'lsp', 'list-sessions': 'ls', 'list-windows': 'lsw', 'load-buffer': 'loadb', 'lock-client': 'lockc',
  'lock-server': 'lock', 'lock-session': 'locks', 'move-pane': 'movep', 'move-window': 'movew', 'new-session': 'new', 'new-window': 'neww', 'next-layout': 'nextl',
  'next-window': 'next', 'paste-buffer': 'pasteb', 'pipe-pane': 'pipep', 'previous-layout': 'prevl', 'previous-window': 'prev', 'refresh-client': 'refresh',
  'rename-session': 'rename', 'rename-window': 'renamew', 'resize-pane': 'resizep', 'resize-window': 'resizew', 'respawn-pane': 'respawnp', 'respawn-window': 'respawnw',
  'rotate-window': 'rotatew', 'run-shell': 'run', 'save-buffer': 'saveb', 'select-layout': 'selectl', 'select-pane': 'selectp', 'select-window': 'selectw',
  'send-keys': 'send', 'send-prefix': '', 'server-access': '', 'set-buffer': 'setb', 'set-environment': 'setenv', 'set-hook': '', 'set-option': 'set',
  'set-window-option': 'setw', 'show-buffer': 'showb', 'show-environment': 'showenv', 'show-hooks': '', 'show-messages': 'showmsgs', 'show-options': 'show',
  'show-prompt-history': 'showphist', 'show-window-options': 'showw', 'source-file': 'source', 'split-window': 'splitw', 'start-server': 'start',
  'suspend-client': 'suspendc', 'swap-pane': 'swapp', 'swap-window': 'swapw', 'switch-client': 'switchc', 'unbind-key': 'unbind', 'unlink-window': 'unlinkw',
  'wait-for': 'wait',
};

/** tmux's default `command-alias` (expanded before a command is looked up, by its exact name). */
const TMUX_DEFAULT_ALIASES: Readonly<Record<string, string>> = {
  'split-pane': 'split-window', splitp: 'split-window', 'server-info': 'show-messages', info: 'show-messages', 'choose-window': 'choose-tree', 'choose-session': 'choose-tree',
};

/** Commands that run or type a command, or write a file, the reading does not follow (above). */
const TMUX_UNREAD_COMMANDS = new Set([
  'send-keys', 'paste-buffer', 'set-buffer', 'load-buffer', 'save-buffer', 'bind-key', 'set-hook', 'command-prompt', 'confirm-before', 'display-menu', 'display-panes',
  'choose-buffer', 'choose-client', 'choose-tree', 'set-option', 'set-window-option', 'set-environment', 'source-file', 'detach-client',
]);

/** The full name of the tmux command `name`, as tmux finds it; undefined when tmux knows none (or several: it refuses). */
export function tmuxFind(name: string | undefined): string | undefined {
  if (name === undefined || name === '' || name.startsWith('-')) return undefined;
  const aliased = ownEntry(TMUX_DEFAULT_ALIASES, name);
  if (aliased !== undefined) return aliased;
  const full = Object.keys(TMUX_TABLE);
  const byAlias = full.find((command) => TMUX_TABLE[command] === name);
  if (byAlias !== undefined) return byAlias;
  if (ownEntry(TMUX_TABLE, name) !== undefined) return name;
  const prefixed = full.filter((command) => command.startsWith(name));
  return prefixed.length === 1 ? prefixed[0] : undefined;
}

/** Whether the tmux command `name` (as given) runs, types or writes what the reading does not follow. */
export function tmuxCommandUnread(name: string | undefined): boolean {
  const found = tmuxFind(name);
  return found !== undefined && TMUX_UNREAD_COMMANDS.has(found);
}

/** Whether a word of a tmux line holds a format that may run a command (`#(…)`) or expand one (`#{…}`). */
export function tmuxFormat(word: string): boolean {
  return /#[({]/.test(word);
}

/** Whether a command string tmux parses itself (`if`'s commands, `run -C`) holds its parser's escapes, variables or blocks. */
export function tmuxParsedUnread(text: string): boolean {
  return /[\\${}%]/.test(text);
}

/**
 * The lines a command string tmux parses itself is read as: `tmux <string>`, and, when it holds a
 * `;` or a new line (tmux's parser separates commands at both, where a shell reading of `tmux a ;
 * b` takes `b` for a program of its own), `tmux <part>` for each part between them (quotes
 * ignored: a part more is read, toward tagging). `tmux if true 'neww -d true ; neww rm -rf ~'` hid rm.
 */
export function tmuxStringLines(text: string): string[] {
  const parts = /[;\n]/.test(text) ? text.split(/[;\n]/).filter((part) => part.trim() !== '') : [];
  return [`tmux ${text}`, ...parts.map((part) => `tmux ${part}`)];
}

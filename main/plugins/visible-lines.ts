import { MAX_LOG_BYTES } from './limits.js';
import type { PluginLogger } from './providers.js';
import { oneLogLine } from './worker/log-line.js';

/**
 * `logger`, handed every line as one visible line (`oneLogLine`: a line break as `\n`, a control,
 * a C1 or bidi character as its `\u` escape). The registry's and its handles' own lines about a
 * plugin carry what whoever planted its folder chose (the folder's name, module.toml's values, the
 * paths they lead to), and an embedder's logger may print them raw: a folder named
 * `x\nmodule echo: granted …` must not write a line of its own into its log. A guest's lines are
 * made so in the worker already and do not pass here (`HandleInit.guestLogger`). A line with
 * nothing to escape is handed on as it is, whatever its length.
 */
export function visibleLines(logger: PluginLogger): PluginLogger {
  return {
    log(level, message, fields) {
      logger.log(level, visibleLine(message), fields);
    },
  };
}

/** One line of the host's about a plugin as one visible line (`oneLogLine`, at most `MAX_LOG_BYTES`): the registry's and the modules watcher's. */
export function visibleLine(message: string): string {
  return oneLogLine(message, MAX_LOG_BYTES);
}

import type { PluginLogger } from '../../main/plugins/index.js';

/** Lines the watcher and the registry say, and a way to wait for the one that matches. */
export interface SaidLines {
  all: string[];
  say: (line: string) => void;
  /** The next line matching `pattern`, said since the last line waited for (or the first after). */
  next: (pattern: RegExp) => Promise<string>;
}

export function lines(): SaidLines {
  const all: string[] = [];
  const waiting: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  /** Lines before this index have been waited for: each wait is for the next matching line. */
  let read = 0;
  return {
    all,
    say(line) {
      all.push(line);
      const at = waiting.findIndex((w) => w.pattern.test(line));
      if (at >= 0) {
        read = all.length;
        waiting.splice(at, 1)[0]!.resolve(line);
      }
    },
    next(pattern) {
      const at = all.findIndex((l, i) => i >= read && pattern.test(l));
      if (at >= 0) {
        read = at + 1;
        return Promise.resolve(all[at]!);
      }
      return new Promise((resolve) => waiting.push({ pattern, resolve }));
    },
  };
}

/** A registry logger that says each line as `level: module NAME: message` (the module part when the line names one). */
export function sayingLogger(say: (line: string) => void): PluginLogger {
  return { log: (level, message, fields) => say(`${level}: ${fields?.['module'] ? `module ${String(fields['module'])}: ` : ''}${message}`) };
}

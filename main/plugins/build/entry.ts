/**
 * The module `plugin build` hands componentize-js instead of the author's file. It imports the
 * author's `plugin` and exports a wrapped one, so that every plugin built here:
 *
 * - answers an ordinary exception from `invokeTool` (a thrown `Error`, string, anything that is
 *   not a `{ kind, message }` tool-error) as a `failed` tool-error carrying its message: without
 *   this, componentize-js cannot lower the value into `tool-error` and the guest traps with the
 *   message lost;
 * - awaits a Promise from an `async invokeTool` (componentize-js runs the engine's event loop until
 *   it settles): a rejection is a tool-error as a throw is;
 * - answers an ill-typed return (not `{ content: string }`, bad `usage`) the same way, saying
 *   what was returned;
 * - logs why `metadata()` or `listTools()` threw, or what is wrong with their answer (a schema
 *   given as an object, an unknown capability), before the trap that follows: they have no error
 *   case in the WIT, and componentize-js's own trap says only "unreachable";
 * - has a `console` whose methods are `chatty:plugin/logging` lines: the engine is built without
 *   the 'stdio' feature, whose WASI imports include `wasi:filesystem`.
 */

import { NETWORK_REFUSAL_KEY } from '../network/refusal-key.js';

/** The file name the wrapper is written under, beside the module (removed after the build). */
export const ENTRY_PREFIX = '.chatty-build-entry-';

/** The wrapper's source; `authoredSpecifier` is the author's file relative to the wrapper. */
export function entrySource(authoredSpecifier: string): string {
  return `// Written by \`chatty-gateway plugin build\` for one build and removed after it.
import { log as hostLog } from 'chatty:plugin/logging@0.3.0';
import { get as hostConfig } from 'chatty:plugin/config@0.3.0';
import * as authoredModule from ${JSON.stringify(authoredSpecifier)};

const authored = authoredModule.plugin;
const KINDS = ['unknown-tool', 'invalid-arguments', 'denied', 'failed'];
const CAPABILITIES = ['llm', 'config', 'logging', 'file', 'billing'];
const U32_MAX = 4294967295;

function text(value) {
  if (typeof value === 'string') return value;
  if (value instanceof Error) return value.name && value.name !== 'Error' ? value.name + ': ' + value.message : value.message;
  // A host import's err arrives as a ComponentError: not an Error, its text in \`message\`.
  if (value !== null && typeof value === 'object' && typeof value.message === 'string' && value.message !== '') return value.message;
  try {
    const json = JSON.stringify(value);
    if (json !== undefined) return json;
  } catch {}
  return String(value);
}

function describe(value) {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return typeof value.then === 'function' ? 'a Promise' : 'an object';
  if (typeof value === 'function') return 'a function (not called?)';
  return 'a ' + typeof value + ' (' + text(value) + ')';
}

function failed(message) {
  return { kind: 'failed', message };
}

function toolError(err) {
  if (err !== null && typeof err === 'object' && typeof err.kind === 'string' && typeof err.message === 'string') {
    if (KINDS.includes(err.kind)) return { kind: err.kind, message: err.message };
    return failed(err.message + ' (the plugin threw a tool-error of kind "' + err.kind + '"; kinds are ' + KINDS.join(', ') + ')');
  }
  const message = text(err);
  return failed(message === '' ? 'invokeTool threw ' + describe(err) + ' without a message' : message);
}

function isU32(n) {
  return Number.isInteger(n) && n >= 0 && n <= U32_MAX;
}

function isThenable(value) {
  return value !== null && typeof value === 'object' && typeof value.then === 'function';
}

function toolResult(result) {
  if (result === null || typeof result !== 'object' || Array.isArray(result) || isThenable(result)) {
    throw failed('invokeTool returned ' + describe(result) + '; it must return { content: string }' + (isThenable(result) ? ' (a Promise that resolved to a Promise)' : ''));
  }
  if (typeof result.content !== 'string') {
    if (isThenable(result.content)) throw failed('invokeTool returned content that is a Promise; await it: \`return { content: await … }\` in an \`async invokeTool\`');
    throw failed('invokeTool returned content that is ' + describe(result.content) + '; content must be a string (JSON.stringify an object)');
  }
  const usage = result.usage;
  if (usage === undefined || usage === null) return { content: result.content };
  if (typeof usage !== 'object' || !isU32(usage.inputTokens) || !isU32(usage.outputTokens)) {
    throw failed('invokeTool returned usage ' + text(usage) + '; usage must be { inputTokens, outputTokens }, whole numbers from 0 to ' + U32_MAX);
  }
  return { content: result.content, usage: { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens } };
}

function method(name) {
  if (authored === null || typeof authored !== 'object' || typeof authored[name] !== 'function') {
    throw new Error('the plugin module must export \`plugin\` with a function ' + name + '()');
  }
  return authored[name].bind(authored);
}

function strings(value, keys, where, hint) {
  for (const key of keys) {
    if (typeof value[key] !== 'string') return where + key + ' is ' + describe(value[key]) + '; it must be a string' + (hint[key] ?? '');
  }
  return undefined;
}

function metadataProblem(m) {
  if (m === null || typeof m !== 'object' || Array.isArray(m)) {
    return 'returned ' + describe(m) + '; it must return { name, version, description, requestedCapabilities, configKeys }';
  }
  const problem = strings(m, ['name', 'version', 'description'], '', {});
  if (problem) return problem;
  if (!Array.isArray(m.requestedCapabilities)) return 'requestedCapabilities is ' + describe(m.requestedCapabilities) + '; it must be an array';
  for (const c of m.requestedCapabilities) {
    if (!CAPABILITIES.includes(c)) return 'requestedCapabilities has ' + text(c) + '; capabilities are ' + CAPABILITIES.join(', ');
  }
  if (!Array.isArray(m.configKeys)) return 'configKeys is ' + describe(m.configKeys) + '; it must be an array';
  for (const [i, k] of m.configKeys.entries()) {
    if (k === null || typeof k !== 'object' || typeof k.name !== 'string' || typeof k.description !== 'string' || typeof k.required !== 'boolean') {
      return 'configKeys[' + i + '] is ' + text(k) + '; it must be { name: string, description: string, required: boolean }';
    }
  }
  return undefined;
}

function toolsProblem(list) {
  if (!Array.isArray(list)) return 'returned ' + describe(list) + '; it must return an array of { name, description, parametersSchema }';
  for (const [i, t] of list.entries()) {
    if (t === null || typeof t !== 'object') return 'returned ' + describe(t) + ' as tool ' + i;
    const where = 'tool ' + (typeof t.name === 'string' ? JSON.stringify(t.name) : i) + ': ';
    const problem = strings(t, ['name', 'description', 'parametersSchema'], where, { parametersSchema: ' (JSON.stringify the schema)' });
    if (problem) return problem;
  }
  return undefined;
}

function checked(name, problemIn) {
  let value;
  try {
    value = method(name)();
  } catch (err) {
    hostLog('error', name + '() threw: ' + text(err));
    throw err;
  }
  const problem = problemIn(value);
  if (problem === undefined) return value;
  hostLog('error', name + '() ' + problem);
  throw new Error(name + '() ' + problem);
}

function line(args) {
  return args.map((a) => (typeof a === 'string' ? a : text(a))).join(' ');
}

const consoleLevels = { log: 'info', info: 'info', dir: 'info', debug: 'debug', trace: 'debug', warn: 'warn', error: 'error' };
const hostConsole = {};
// The rest of console (count, group, time, table…) stays callable, writing nowhere as before.
const engineConsole = globalThis.console;
for (const name of ['clear', 'count', 'countReset', 'dirxml', 'group', 'groupCollapsed', 'groupEnd', 'table', 'time', 'timeEnd', 'timeLog']) {
  const own = engineConsole?.[name];
  hostConsole[name] = typeof own === 'function' ? own.bind(engineConsole) : () => {};
}
for (const [name, level] of Object.entries(consoleLevels)) hostConsole[name] = (...args) => hostLog(level, line(args));
hostConsole.assert = (condition, ...args) => {
  if (!condition) hostLog('error', line(['Assertion failed' + (args.length ? ':' : ''), ...args]));
};
try {
  Object.defineProperty(globalThis, 'console', { value: hostConsole, writable: true, configurable: true });
} catch {
  for (const name of Object.keys(hostConsole)) globalThis.console[name] = hostConsole[name];
}

// fetch rejects with a bare NetworkError whatever the host said; the host keeps why it refused
// (not on the allow list, a private address, the body budget) for this wrapper to read once.
const engineFetch = globalThis.fetch;
if (typeof engineFetch === 'function') {
  globalThis.fetch = function fetch(input, init) {
    return engineFetch(input, init).catch((err) => {
      const why = hostConfig(${JSON.stringify(NETWORK_REFUSAL_KEY)});
      throw why ? new TypeError(why, { cause: err }) : err;
    });
  };
}

export const plugin = {
  metadata() {
    return checked('metadata', metadataProblem);
  },
  listTools() {
    return checked('listTools', toolsProblem);
  },
  invokeTool(call) {
    let result;
    try {
      result = method('invokeTool')(call);
    } catch (err) {
      throw toolError(err);
    }
    // An async tool: componentize-js runs the guest's event loop until the Promise settles.
    if (isThenable(result)) return Promise.resolve(result).then(toolResult, (err) => { throw toolError(err); });
    return toolResult(result);
  },
};
`;
}

// json-tools: JSON checks an LLM gets wrong by eye. Reads `indent` from [config] and serves the
// files below [files] root through `read_file`.
import { get } from 'chatty:plugin/config@0.3.0';
import { readBytes } from 'chatty:plugin/file@0.3.0';

function invalid(message) {
  return { kind: 'invalid-arguments', message };
}

function parseDocument(source) {
  if (typeof source !== 'string') throw invalid('`json` must be a string holding a JSON document');
  try {
    return JSON.parse(source);
  } catch (err) {
    throw { kind: 'failed', message: `not valid JSON: ${err.message}` };
  }
}

function configuredIndent() {
  const n = Number.parseInt(get('indent') ?? '2', 10);
  return Number.isInteger(n) && n >= 0 && n <= 8 ? n : 2;
}

/** `a.b[0].c` or `a.b.0.c` → ['a', 'b', 0, 'c']. */
function parsePath(path) {
  if (typeof path !== 'string') throw invalid('`path` must be a string like "a.b[0].c"');
  const steps = [];
  for (const part of path.split('.').filter((p) => p !== '')) {
    const m = /^([^[\]]*)((?:\[\d+\])*)$/.exec(part);
    if (!m) throw invalid(`cannot read path segment "${part}"`);
    if (m[1] !== '') steps.push(/^\d+$/.test(m[1]) ? Number(m[1]) : m[1]);
    for (const index of m[2].matchAll(/\[(\d+)\]/g)) steps.push(Number(index[1]));
  }
  return steps;
}

function pick(value, steps) {
  let here = value;
  for (const step of steps) {
    if (here === null || typeof here !== 'object' || !(step in here)) return { found: false };
    here = here[step];
  }
  return { found: true, value: here };
}

const TOOLS = {
  validate: {
    description: 'Says whether a string is valid JSON, and if not, why.',
    schema: { type: 'object', properties: { json: { type: 'string' } }, required: ['json'] },
    run({ json }) {
      try {
        const value = parseDocument(json);
        return JSON.stringify({ valid: true, type: Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value });
      } catch (err) {
        if (err.kind === 'failed') return JSON.stringify({ valid: false, error: err.message });
        throw err;
      }
    },
  },
  pretty: {
    description: 'Pretty-prints a JSON document (indent from the arguments, else the module config).',
    schema: { type: 'object', properties: { json: { type: 'string' }, indent: { type: 'integer', minimum: 0, maximum: 8 } }, required: ['json'] },
    run({ json, indent }) {
      return JSON.stringify(parseDocument(json), null, Number.isInteger(indent) ? indent : configuredIndent());
    },
  },
  pick: {
    description: 'Picks the value at a path ("a.b[0].c") out of a JSON document.',
    schema: { type: 'object', properties: { json: { type: 'string' }, path: { type: 'string' } }, required: ['json', 'path'] },
    run({ json, path }) {
      const got = pick(parseDocument(json), parsePath(path));
      if (!got.found) throw { kind: 'failed', message: `nothing at ${path}` };
      return JSON.stringify(got.value);
    },
  },
  read_file: {
    description: 'Reads a JSON file shipped with this plugin (try "countries.json"), optionally picking a path.',
    schema: { type: 'object', properties: { file: { type: 'string' }, path: { type: 'string' } }, required: ['file'] },
    run({ file, path }) {
      if (typeof file !== 'string') throw invalid('`file` must be a string');
      const bytes = readBytes(file); // throws the host's error text when refused
      const value = parseDocument(new TextDecoder().decode(bytes));
      if (path === undefined) return JSON.stringify(value, null, configuredIndent());
      const got = pick(value, parsePath(path));
      if (!got.found) throw { kind: 'failed', message: `nothing at ${path} in ${file}` };
      return JSON.stringify(got.value);
    },
  },
};

export const plugin = {
  metadata() {
    return {
      name: 'json-tools',
      version: '1.0.0',
      description: 'JSON utilities: validate, pretty-print, pick a path, read a bundled JSON file.',
      requestedCapabilities: ['config', 'file'],
      configKeys: [{ name: 'indent', description: 'Default indent for pretty output (0-8)', required: false }],
    };
  },
  listTools() {
    return Object.entries(TOOLS).map(([name, t]) => ({ name, description: t.description, parametersSchema: JSON.stringify(t.schema) }));
  },
  invokeTool(call) {
    const tool = TOOLS[call.name];
    if (!tool) throw { kind: 'unknown-tool', message: `json-tools has no tool ${call.name}` };
    let args;
    try {
      args = JSON.parse(call.argumentsJson);
    } catch {
      throw invalid('arguments are not JSON');
    }
    if (args === null || typeof args !== 'object') throw invalid('arguments must be a JSON object');
    // Anything else a tool throws (an Error, a string) reaches the caller as a 'failed' tool-error.
    return { content: tool.run(args) };
  },
};

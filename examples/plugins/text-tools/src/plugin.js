// text-tools: small, dependable text utilities for an LLM that should not count words itself.
import { log } from 'chatty:plugin/logging@0.3.0';

const text = { type: 'string', description: 'The text to work on' };

function words(s) {
  return s.split(/\s+/).filter((w) => w.length > 0);
}

function splitIdentifier(s) {
  return s
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[^A-Za-z0-9\u00C0-\u024F]+/)
    .filter((w) => w.length > 0)
    .map((w) => w.toLowerCase());
}

// The engine has no Unicode tables (no \p{…}, no normalize), so accents are folded by hand.
const ACCENTS = { à: 'a', á: 'a', â: 'a', ä: 'a', ã: 'a', å: 'a', ç: 'c', è: 'e', é: 'e', ê: 'e', ë: 'e', ì: 'i', í: 'i', î: 'i', ï: 'i', ñ: 'n', ò: 'o', ó: 'o', ô: 'o', ö: 'o', õ: 'o', ø: 'o', ù: 'u', ú: 'u', û: 'u', ü: 'u', ý: 'y', ÿ: 'y', ß: 'ss', æ: 'ae', œ: 'oe' };

function foldAccents(s) {
  return s.toLowerCase().replace(/[^\u0000-\u007f]/g, (c) => ACCENTS[c] ?? c);
}

const CASES = {
  upper: (s) => s.toUpperCase(),
  lower: (s) => s.toLowerCase(),
  title: (s) => s.toLowerCase().replace(/(^|\s)(\S)/g, (_, sp, c) => sp + c.toUpperCase()),
  snake: (s) => splitIdentifier(s).join('_'),
  kebab: (s) => splitIdentifier(s).join('-'),
  camel: (s) => splitIdentifier(s).map((w, i) => (i === 0 ? w : w[0].toUpperCase() + w.slice(1))).join(''),
  pascal: (s) => splitIdentifier(s).map((w) => w[0].toUpperCase() + w.slice(1)).join(''),
};

const TOOLS = {
  word_count: {
    description: 'Counts words, characters, lines and sentences in a text.',
    schema: { type: 'object', properties: { text }, required: ['text'] },
    run({ text: s }) {
      const stats = {
        words: words(s).length,
        characters: [...s].length,
        lines: s === '' ? 0 : s.split('\n').length,
        sentences: (s.match(/[^.!?]+[.!?]+/g) ?? []).length,
      };
      return JSON.stringify(stats);
    },
  },
  slugify: {
    description: 'Turns a title into a URL slug: lower case ASCII letters, digits and hyphens.',
    schema: { type: 'object', properties: { text, max_length: { type: 'integer', minimum: 1 } }, required: ['text'] },
    run({ text: s, max_length: max }) {
      let slug = foldAccents(s)
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, '-')
        .replace(/^-+|-+$/g, '');
      if (Number.isInteger(max) && slug.length > max) slug = slug.slice(0, max).replace(/-+$/, '');
      return slug;
    },
  },
  convert_case: {
    description: `Converts text to another case: ${Object.keys(CASES).join(', ')}.`,
    schema: { type: 'object', properties: { text, to: { type: 'string', enum: Object.keys(CASES) } }, required: ['text', 'to'] },
    run({ text: s, to }) {
      const convert = CASES[to];
      if (!convert) throw { kind: 'invalid-arguments', message: `\`to\` must be one of ${Object.keys(CASES).join(', ')}` };
      return convert(s);
    },
  },
};

export const plugin = {
  metadata() {
    return {
      name: 'text-tools',
      version: '1.0.0',
      description: 'Text utilities: word count, slugify, case conversion.',
      requestedCapabilities: ['logging'],
      configKeys: [],
    };
  },
  listTools() {
    return Object.entries(TOOLS).map(([name, t]) => ({ name, description: t.description, parametersSchema: JSON.stringify(t.schema) }));
  },
  invokeTool(call) {
    const tool = TOOLS[call.name];
    if (!tool) throw { kind: 'unknown-tool', message: `text-tools has no tool ${call.name}` };
    let args;
    try {
      args = JSON.parse(call.argumentsJson);
    } catch {
      throw { kind: 'invalid-arguments', message: 'arguments are not JSON' };
    }
    if (typeof args?.text !== 'string') throw { kind: 'invalid-arguments', message: '`text` must be a string' };
    log('debug', `${call.name} on ${args.text.length} characters`);
    return { content: tool.run(args) };
  },
};

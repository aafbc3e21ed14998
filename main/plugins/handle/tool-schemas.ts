import { hiddenIn } from '../hidden-text.js';
import { asciiOnly, QUOTED_CHARS as QUOTED_VALUE_CHARS, quoted } from '../quoted.js';
import { howAlike, nameSkeleton } from '../name-skeleton.js';
import type { ToolDefinition } from '../worker/protocol.js';

/** A tool whose `parametersSchema` is not a JSON Schema for an object of arguments. */
export class ToolSchemaError extends Error {
  override readonly name = 'ToolSchemaError';
}

/**
 * The guest's tools with each `parametersSchema` checked and made explicit. A tool's arguments
 * are always a JSON object (MCP's `inputSchema` must say `"type": "object"`), so the schema must
 * be a JSON object whose `type`, if given, is `"object"`, whose `properties` is an object and
 * whose `required` lists strings. One without `type` (`{}` included: "any arguments") gets
 * `"type": "object"` added in front; one that is not JSON, not an object (`[]`, `true`, a string)
 * or says another type throws `ToolSchemaError` naming the tool. So does a description holding a
 * character a reader cannot see (`hiddenIn`): the client's model reads what the person does.
 */
export function checkedTools(tools: readonly ToolDefinition[]): ToolDefinition[] {
  checkNames(tools);
  for (const { name, description } of tools) {
    const hidden = hiddenIn(description);
    if (hidden !== undefined) throw new ToolSchemaError(`tool '${name}': its description ${hidden}`);
  }
  return tools.map((tool) => ({ ...tool, parametersSchema: checkedSchema(tool) }));
}

/** MCP's tool-name rule (SEP-986): 1–128 characters, each an ASCII letter, a digit, `_`, `-` or `.`. */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;
/** How much of a refused name a message quotes. */
const QUOTED_NAME_CHARS = 80;

/**
 * An MCP client's model picks a tool by its name alone, so a name must say one thing: MCP's
 * rule (no look-alike letters from other scripts, no bidi or control characters, no spaces), and
 * no two names in the list equal or equal but for case (`greet` twice: which one runs?;
 * `delete_file` beside `Delete_File`).
 */
function checkNames(tools: readonly ToolDefinition[]): void {
  const seen = new Map<string, string>();
  for (const { name } of tools) {
    if (!TOOL_NAME.test(name)) {
      const quoted = asciiOnly(JSON.stringify(name.slice(0, QUOTED_NAME_CHARS)));
      const shown = name.length > QUOTED_NAME_CHARS ? `${quoted}… (${name.length} characters)` : quoted;
      throw new ToolSchemaError(`tool ${shown}: a tool name is 1–128 of A–Z a–z 0–9 _ - . (MCP's tool-name rule), so a client's model cannot confuse it with another`);
    }
    const folded = nameSkeleton(name);
    const other = seen.get(folded);
    if (other === name) throw new ToolSchemaError(`tool '${name}' is listed twice; each tool needs a name of its own`);
    if (other !== undefined) throw new ToolSchemaError(`tools '${other}' and '${name}' ${howAlike(other, name)}; a client's model would confuse them`);
    seen.set(folded, name);
  }
}

function checkedSchema(tool: ToolDefinition): string {
  const refuse = (problem: string): never => {
    throw new ToolSchemaError(`tool '${tool.name}': its parametersSchema ${problem}`);
  };
  let schema: unknown;
  try {
    schema = JSON.parse(tool.parametersSchema);
  } catch (err) {
    // The parser's message may quote the bytes it stopped at (Node 22 quotes some around them).
    const why = err instanceof Error ? err.message : String(err);
    return refuse(`is not JSON (${asciiOnly(why.length > 2 * QUOTED_VALUE_CHARS ? `${why.slice(0, 2 * QUOTED_VALUE_CHARS)}...` : why)})`);
  }
  if (!isPlainObject(schema)) return refuse(`is ${describe(schema)}, not a JSON Schema object such as {"type":"object","properties":{…}}`);
  if ('type' in schema && schema['type'] !== 'object') {
    return refuse(`says "type": ${quoted(schema['type'])}; a tool's arguments are a JSON object, so it must be "object" (or left out)`);
  }
  if ('properties' in schema && !isPlainObject(schema['properties'])) return refuse(`has "properties" that is ${describe(schema['properties'])}, not an object`);
  if ('required' in schema && !(Array.isArray(schema['required']) && schema['required'].every((k) => typeof k === 'string'))) {
    return refuse('has "required" that is not a list of property names');
  }
  const problem = problemInJson(schema);
  if (problem !== undefined) return refuse(problem);
  return 'type' in schema ? tool.parametersSchema : JSON.stringify({ type: 'object', ...schema });
}

/** A place in a parsed schema: its key and its parent's place (the path is spelt only when shown). */
interface Place {
  key: string;
  up: Place | undefined;
}

/** How many characters of a place's path a refusal shows (its end: the nearest keys). */
const SHOWN_PATH_CHARS = 120;

/**
 * How deep a schema's objects and arrays may nest. JSON.parse reads any depth, but whoever
 * serialises it again (the MCP server's answer to `tools/list`, a client, an agent's request to
 * its model) recurses: 200,000 levels throw `Maximum call stack size exceeded` there. Real
 * schemas nest a few levels; 64 leaves room.
 */
export const MAX_SCHEMA_DEPTH = 64;

/**
 * What is wrong with a parsed schema beyond its shape: objects and arrays nested deeper than
 * `MAX_SCHEMA_DEPTH`, or a string (a key or a value, however deep: a property's `description`, an
 * `enum`, a `title`) holding a character a reader cannot see (`hiddenIn`): the client's model reads
 * the schema as it reads the description. A loop, not recursion, and each place links to its
 * parent rather than carrying its path (a path per level would be quadratic in the depth).
 */
function problemInJson(root: unknown): string | undefined {
  const stack: { value: unknown; place: Place | undefined; depth: number }[] = [{ value: root, place: undefined, depth: 1 }];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const { value, place, depth } = next;
    if (typeof value === 'string') {
      const hidden = hiddenIn(value);
      if (hidden !== undefined) return `${shownPlace(place)}${hidden}`;
    } else if (typeof value === 'object' && value !== null) {
      if (depth > MAX_SCHEMA_DEPTH) return `nests deeper than ${MAX_SCHEMA_DEPTH} levels (${shownPlace(place).trimEnd()}); a client serialising it again would run out of stack`;
      for (const [key, child] of Object.entries(value)) {
        const hidden = hiddenIn(key);
        if (hidden !== undefined) return `${shownPlace(place)}${hidden.replace(/^(holds \S+ at character \d+)/, '$1 (in a key)')}`;
        stack.push({ value: child, place: { key, up: place }, depth: depth + 1 });
      }
    }
  }
  return undefined;
}

/** `at properties.path.description ` (its last `SHOWN_PATH_CHARS`), or nothing for the schema itself. */
function shownPlace(place: Place | undefined): string {
  if (place === undefined) return '';
  const keys: string[] = [];
  let length = 0;
  let at: Place | undefined = place;
  for (; at !== undefined && length <= SHOWN_PATH_CHARS; at = at.up) {
    // Quoted as tool names are: the plugin's key, line breaks and all, never reaches a log raw.
    const shown = /^[A-Za-z0-9_$-]+$/.test(at.key) ? at.key : asciiOnly(JSON.stringify(at.key.slice(0, QUOTED_NAME_CHARS)));
    keys.unshift(shown);
    length += shown.length + 1;
  }
  const path = keys.join('.');
  return `at ${at !== undefined || path.length > SHOWN_PATH_CHARS ? `…${path.slice(-SHOWN_PATH_CHARS)}` : path} `;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value} (${quoted(value)})`;
}

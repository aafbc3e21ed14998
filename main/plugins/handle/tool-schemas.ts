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
 * or says another type throws `ToolSchemaError` naming the tool.
 */
export function checkedTools(tools: readonly ToolDefinition[]): ToolDefinition[] {
  return tools.map((tool) => ({ ...tool, parametersSchema: checkedSchema(tool) }));
}

function checkedSchema(tool: ToolDefinition): string {
  const refuse = (problem: string): never => {
    throw new ToolSchemaError(`tool '${tool.name}': its parametersSchema ${problem}`);
  };
  let schema: unknown;
  try {
    schema = JSON.parse(tool.parametersSchema);
  } catch (err) {
    return refuse(`is not JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  if (!isPlainObject(schema)) return refuse(`is ${describe(schema)}, not a JSON Schema object such as {"type":"object","properties":{…}}`);
  if ('type' in schema && schema['type'] !== 'object') {
    return refuse(`says "type": ${JSON.stringify(schema['type'])}; a tool's arguments are a JSON object, so it must be "object" (or left out)`);
  }
  if ('properties' in schema && !isPlainObject(schema['properties'])) return refuse(`has "properties" that is ${describe(schema['properties'])}, not an object`);
  if ('required' in schema && !(Array.isArray(schema['required']) && schema['required'].every((k) => typeof k === 'string'))) {
    return refuse('has "required" that is not a list of property names');
  }
  return 'type' in schema ? tool.parametersSchema : JSON.stringify({ type: 'object', ...schema });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value} (${JSON.stringify(value)})`;
}

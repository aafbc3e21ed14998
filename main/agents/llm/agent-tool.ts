/** A JSON Schema object, as the model's function `parameters` and MCP's `inputSchema` carry it. */
export type JsonSchemaObject = { [key: string]: unknown };

/** One tool the model may call: a plugin tool through the gateway, or one of the fabric's calls. */
export interface AgentTool {
  /** The function name the model sees (`^[A-Za-z0-9_-]{1,64}$`). */
  readonly name: string;
  readonly description: string;
  readonly parameters: JsonSchemaObject;
  /**
   * Runs the call with the arguments the model wrote (parsed JSON) and answers with the text the
   * model reads next. A refusal or a failure the model can act on is text too (`ToolRefusal`);
   * anything else thrown fails the task.
   */
  run(args: unknown, signal: AbortSignal): Promise<string>;
}

/** A tool's answer that says it did not do what was asked (bad arguments, denied, refused): sent to the model as `error: <message>`. */
export class ToolRefusal extends Error {
  override readonly name = 'ToolRefusal';
}

/** An approved command's environment: the worker's, without the model API's key (a command has no use for it, and its output goes to the model). */
export function commandEnv(env: NodeJS.ProcessEnv, secrets: readonly string[]): NodeJS.ProcessEnv {
  const copy = { ...env };
  for (const name of secrets) delete copy[name];
  return copy;
}

/** What the model is told about itself before the task's text. */
export function systemPrompt(facts: { workspace: string; pluginModules: readonly string[]; pluginNote?: string | undefined }): string {
  const plugins =
    facts.pluginModules.length > 0
      ? `Plugin tools (named <module>__<tool>) come from these modules of the gateway: ${facts.pluginModules.join(', ')}.`
      : `No plugin tools are available${facts.pluginNote ? ` (${facts.pluginNote})` : ''}.`;
  return [
    'You are an agent working on one task for a user, in a fabric of agents.',
    `Your workspace is ${facts.workspace}: commands run there, and files can be written only inside it.`,
    plugins,
    'exec and write_file wait for the user to approve each one: say what you need and why in the command or content itself, and when one is denied it was not done, so do not ask again for the same thing; work around it or explain.',
    'invoke_agent hands a task to another agent (see list_agents); ask_user asks the user when you cannot decide yourself.',
    'When you are done, answer with your final result as plain text, without calling a tool.',
  ].join('\n');
}

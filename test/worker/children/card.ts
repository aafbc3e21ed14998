/** The card both test workers say hello with. */
export const CARD = { name: 'mapper', description: 'maps an agent session to task events', version: '1.0.0', skills: [] };

// A Content-Security-Policy read as directives, and what makes one too weak for the app's page.

/** Directive name (lower case) → its source expressions, in order. A repeated directive keeps the first (as browsers do). */
export function parseCsp(policy: string): Map<string, string[]> {
  const directives = new Map<string, string[]>();
  for (const part of policy.split(';')) {
    const [name, ...values] = part.trim().split(/\s+/).filter((token) => token !== '');
    if (name === undefined) continue;
    const key = name.toLowerCase();
    if (!directives.has(key)) directives.set(key, values);
  }
  return directives;
}

/** What a script may be fetched or run from, on the page that holds the root's answers: only its own origin. */
const SCRIPT_DIRECTIVES = ['script-src', 'script-src-elem', 'script-src-attr', 'worker-src'];
const NONE_DIRECTIVES = ['default-src', 'object-src', 'base-uri', 'form-action', 'frame-ancestors', 'connect-src', 'frame-src'];

/**
 * The ways `policy` falls short of the app's rules, empty when it meets them: every fetch falls
 * back to `'none'`; scripts only from `'self'` (no inline script, no eval, no `data:`/`blob:`,
 * no wildcard or other host); no plugins, `<base>`, forms, framing, network or frames; styles
 * without `'unsafe-inline'`.
 */
export function cspWeaknesses(policy: string): string[] {
  const csp = parseCsp(policy);
  const problems: string[] = [];
  const sources = (name: string): string[] | undefined => csp.get(name) ?? (name === 'frame-ancestors' || name === 'base-uri' || name === 'form-action' ? undefined : csp.get('default-src'));
  for (const name of NONE_DIRECTIVES) {
    const values = sources(name);
    if (values === undefined || values.length !== 1 || values[0] !== "'none'") problems.push(`${name} is ${values === undefined ? 'missing' : values.join(' ')}, not 'none'`);
  }
  for (const name of SCRIPT_DIRECTIVES) {
    const values = sources(name);
    if (values === undefined) continue; // falls back to default-src 'none', checked above
    for (const value of values) if (value !== "'self'" && value !== "'none'") problems.push(`${name} allows ${value}`);
  }
  const scripts = csp.get('script-src');
  if (scripts === undefined || scripts.length !== 1 || scripts[0] !== "'self'") problems.push(`script-src is ${scripts?.join(' ') ?? 'missing'}, not 'self'`);
  for (const [name, values] of csp) {
    for (const value of values) {
      if (/^'unsafe-|^'wasm-unsafe-eval'$/i.test(value)) problems.push(`${name} allows ${value}`);
      if (value === '*' || /^(https?|wss?):?$/i.test(value) || /^https?:\/\//i.test(value)) problems.push(`${name} allows the network (${value})`);
    }
  }
  return problems;
}

/**
 * `named` and 1,000 other members, in a value that counts how often its members are listed
 * (`ownKeys`): a schema that reads only the members it names never lists them, where a zod loose
 * object listed them all to copy each.
 */
export function wideObject(named: Record<string, unknown>): { value: Record<string, unknown>; listed: () => number } {
  const target: Record<string, unknown> = { ...named };
  for (let i = 0; i < 1_000; i++) target[`k${i}`] = i;
  let listed = 0;
  const value = new Proxy(target, {
    ownKeys: (inner) => {
      listed++;
      return Reflect.ownKeys(inner);
    },
  });
  return { value, listed: () => listed };
}

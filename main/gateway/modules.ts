/**
 * What the gateway needs to know of a loaded module. `ModuleRegistry` (main/plugins) provides it;
 * the gateway depends on this shape only, so it can be built and tested on its own.
 */
export interface ServedModule {
  readonly name: string;
  readonly version: string;
  readonly description: string;
  readonly protocols: { readonly mcp: boolean; readonly a2a: boolean };
}

export interface ModuleDirectory {
  list(): readonly ServedModule[];
}

/** The surfaces a module is reachable on, for the index. */
export function surfacesOf(module: ServedModule): string[] {
  const surfaces: string[] = [];
  if (module.protocols.mcp) surfaces.push(`/mcp/${module.name}`, `/mcp/${module.name}/sse`);
  return surfaces;
}

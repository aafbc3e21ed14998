// What a TypeScript consumer of the installed package sees: a tsconfig of theirs compiled with
// `tsc`, and every export of every entry point walked for an `any` (an import whose declarations
// are missing turns into one silently under `skipLibCheck`, the default of most app templates).
// `ts` is the consumer's own TypeScript (the installed project's), so nothing of this repository
// decides how the package resolves.
import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type * as TypeScript from 'typescript';

/** The package's entry points, as a consumer imports them. */
export const ENTRY_POINTS = ['chatty-protocol-gateway', 'chatty-protocol-gateway/worker', 'chatty-protocol-gateway/electron', 'chatty-protocol-gateway/terminal', 'chatty-protocol-gateway/renderer'];

/** The entry points a CommonJS main process may require (`./renderer` is the page's). */
const NODE_ENTRY_POINTS = ENTRY_POINTS.filter((s) => !s.endsWith('/renderer'));

/**
 * A consumer project in `dir` (inside the installed app, so its node_modules resolve): one file
 * importing every entry point; under `module: nodenext` also a CommonJS file requiring the Node
 * ones, `import x = require(…)` in a `.cts`, as docs/embedding.md says such a project may.
 */
export function writeConsumer(dir: string, compilerOptions: Record<string, unknown>): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'consumer.ts'), `${ENTRY_POINTS.map((s, i) => `import * as entry${i} from '${s}';`).join('\n')}\nexport const entries = [${ENTRY_POINTS.map((_, i) => `entry${i}`).join(', ')}];\n`);
  const include = ['consumer.ts'];
  if (compilerOptions['module'] === 'nodenext') {
    writeFileSync(join(dir, 'consumer.cts'), `${NODE_ENTRY_POINTS.map((s, i) => `import entry${i} = require('${s}');`).join('\n')}\nexport const entries = [${NODE_ENTRY_POINTS.map((_, i) => `entry${i}`).join(', ')}];\n`);
    include.push('consumer.cts');
  }
  const config = join(dir, 'tsconfig.json');
  writeFileSync(config, JSON.stringify({ compilerOptions: { target: 'ES2022', strict: true, noEmit: true, lib: ['ES2023', 'DOM', 'DOM.Iterable'], types: ['node'], ...compilerOptions }, include }, null, 2));
  return config;
}

/**
 * Where `any` appears in the public types of the entry points `consumer.ts` imports: each export's
 * value and type, their properties, parameters and results, type arguments, a few levels deep.
 * Only the package's own declarations are walked (the platform's and zod's are not its to answer for).
 */
export function anyInPublicTypes(ts: typeof TypeScript, configPath: string): string[] {
  const parsed = ts.getParsedCommandLineOfConfigFile(configPath, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => { throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n')); } });
  if (!parsed) throw new Error(`${configPath} does not parse`);
  const program = ts.createProgram(parsed.fileNames, parsed.options);
  const checker = program.getTypeChecker();
  const source = program.getSourceFiles().find((f) => f.fileName.endsWith('/consumer.ts'));
  if (!source) throw new Error('consumer.ts is not in the program');
  const found = new Set<string>();
  const seen = new Set<TypeScript.Type>();
  const walk = (type: TypeScript.Type, where: string, depth: number): void => {
    if (type.flags & ts.TypeFlags.Any) {
      found.add(where);
      return;
    }
    if (depth > 6 || seen.has(type)) return;
    seen.add(type);
    if (type.isUnionOrIntersection()) {
      for (const part of type.types) walk(part, where, depth + 1);
      return;
    }
    if (!(type.flags & ts.TypeFlags.Object)) return;
    if ((type as TypeScript.ObjectType).objectFlags & ts.ObjectFlags.Reference) {
      for (const arg of checker.getTypeArguments(type as TypeScript.TypeReference)) walk(arg, `${where}<>`, depth + 1);
    }
    const declaredIn = type.getSymbol()?.declarations?.[0]?.getSourceFile().fileName ?? '';
    if (!declaredIn.includes('/chatty-protocol-gateway/')) return;
    for (const signature of [...type.getCallSignatures(), ...type.getConstructSignatures()]) {
      for (const parameter of signature.parameters) walk(checker.getTypeOfSymbol(parameter), `${where}(${parameter.name})`, depth + 1);
      walk(signature.getReturnType(), `${where}()`, depth + 1);
    }
    for (const property of checker.getPropertiesOfType(type)) {
      // A class's `prototype` is typed with `any` for its type parameters by TypeScript itself;
      // a private member is declared without a type (`private readonly options;`), and no consumer reaches it.
      const declaration = property.valueDeclaration ?? property.declarations?.[0];
      const hidden = declaration !== undefined && ts.getCombinedModifierFlags(declaration) & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected);
      if (property.name === 'prototype' || property.name.startsWith('#') || hidden) continue;
      walk(checker.getTypeOfSymbol(property), `${where}.${property.name}`, depth + 1);
    }
  };
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    const specifier = statement.moduleSpecifier.text;
    const module = checker.getSymbolAtLocation(statement.moduleSpecifier);
    if (!module) {
      found.add(`${specifier} does not resolve`);
      continue;
    }
    for (const exported of checker.getExportsOfModule(module)) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      const where = `${specifier} ${exported.name}`;
      if (symbol.flags & ts.SymbolFlags.Value) walk(checker.getTypeOfSymbol(symbol), where, 0);
      if (symbol.flags & ts.SymbolFlags.Type) walk(checker.getDeclaredTypeOfSymbol(symbol), where, 0);
    }
  }
  return [...found].sort();
}

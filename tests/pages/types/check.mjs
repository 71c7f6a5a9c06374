// The package's types against its JavaScript:
//  1. `tsc` type-checks usage.ts (a typed app importing 'kindling' and 'kindling/worker'
//     through package.json "exports") together with the .d.ts files it reaches;
//     and openai.ts (the chat API against the `openai` package's own types);
//  2. each entry's run-time exports (the module imported in Node) equal the values its
//     .d.ts declares (classes, functions, consts, default), read with the TypeScript
//     compiler API, so a declared export the JS lacks (or the reverse) fails.
// Run from the repository root: node tests/pages/types/check.mjs

import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const root = path.resolve(import.meta.dirname, '../../..');
const require = createRequire(import.meta.url);
const ts = require('typescript');
const pkg = require(path.join(root, 'package.json'));

execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', path.join(import.meta.dirname, 'tsconfig.json')], {
  stdio: 'inherit',
});
console.log('tsc: usage.ts and openai.ts type-check against the package types');

/** The value (not type-only) exports a .d.ts declares, with `default`. */
function declaredValues(dts) {
  const program = ts.createProgram([dts], { strict: true, noEmit: true, moduleResolution: ts.ModuleResolutionKind.Bundler, module: ts.ModuleKind.ESNext });
  const checker = program.getTypeChecker();
  const file = program.getSourceFile(dts);
  const names = [];
  for (const sym of checker.getExportsOfModule(checker.getSymbolAtLocation(file))) {
    const target = sym.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(sym) : sym;
    const typeOnly = sym.declarations?.some((d) => ts.isTypeOnlyExportDeclaration?.(d) || d.isTypeOnly || d.parent?.parent?.isTypeOnly);
    if (!typeOnly && target.flags & ts.SymbolFlags.Value) names.push(sym.escapedName === 'default' ? 'default' : sym.name);
  }
  return names.sort();
}

let failed = false;
for (const [entry, spec] of Object.entries(pkg.exports)) {
  if (typeof spec !== 'object' || !spec.types) continue;
  const declared = declaredValues(path.join(root, spec.types));
  const actual = Object.keys(await import(pathToFileURL(path.join(root, spec.import)).href)).sort();
  const missing = declared.filter((n) => !actual.includes(n));
  const undeclared = actual.filter((n) => !declared.includes(n));
  if (missing.length || undeclared.length) {
    failed = true;
    console.error(`${entry}: declared in ${spec.types} but not exported by ${spec.import}: [${missing}]; exported but not declared: [${undeclared}]`);
  } else {
    console.log(`${entry}: ${spec.import} exports exactly what ${spec.types} declares (${actual.length} values)`);
  }
}
process.exit(failed ? 1 : 0);

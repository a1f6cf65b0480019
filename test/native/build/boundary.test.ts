// The TS/C++ boundary stays one description: every error code a native source raises is one of ErrorCode's (so
// callers can branch on it), and the addon's exports are exactly the keys of NativeAddon in src/native/types.ts, both
// ways (an export missing from the type is untyped; a typed export the addon lacks fails at run time). The declared
// keys come from the TypeScript compiler's view of the type, not from a list kept beside it.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { addon } from '../../../src/native/addon.js';
import { root } from '../../helpers/index.js';


function files(dir: string, pattern: RegExp): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name), pattern) : pattern.test(e.name) ? [join(dir, e.name)] : [],
  );
}

/** The members of ErrorCode, read from src/errors.ts by the compiler. */
function errorCodes(): Set<string> {
  const program = ts.createProgram([join(root, 'src', 'errors.ts')], { strict: true, noEmit: true });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(join(root, 'src', 'errors.ts'))!;
  const alias = source.statements.find((s): s is ts.TypeAliasDeclaration => ts.isTypeAliasDeclaration(s) && s.name.text === 'ErrorCode')!;
  const type = checker.getTypeAtLocation(alias.name);
  return new Set((type.isUnion() ? type.types : [type]).map((t) => (t as ts.StringLiteralType).value));
}

/** The property names of NativeAddon (with what it extends), and which of them are optional. */
function declaredExports(): { all: Set<string>; optional: Set<string> } {
  const path = join(root, 'src', 'native', 'types.ts');
  const program = ts.createProgram([path], { strict: true, noEmit: true });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(path)!;
  const decl = source.statements.find((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === 'NativeAddon')!;
  const props = checker.getPropertiesOfType(checker.getTypeAtLocation(decl.name));
  return {
    all: new Set(props.map((p) => p.name)),
    optional: new Set(props.filter((p) => (p.flags & ts.SymbolFlags.Optional) !== 0).map((p) => p.name)),
  };
}

describe('the TS/C++ boundary', () => {
  it('every error code raised in native/ is an ErrorCode', () => {
    const codes = errorCodes();
    expect(codes.has('E_ARG')).toBe(true);
    const raised = new Map<string, string>();
    for (const f of files(join(root, 'native'), /\.(cpp|h|cu|cuh)$/)) {
      for (const m of readFileSync(f, 'utf8').matchAll(/"(E_[A-Z_]+)"/g)) raised.set(m[1], f.slice(root.length + 1));
    }
    expect(raised.size).toBeGreaterThan(5);
    expect([...raised].filter(([code]) => !codes.has(code)).map(([code, file]) => `${code} (${file})`)).toEqual([]);
  });

  it("the addon's exports are exactly NativeAddon's keys (CUDA-only ones optional)", () => {
    const { all, optional } = declaredExports();
    expect(all.size).toBeGreaterThan(20);
    const actual = new Set(Object.keys(addon()));
    expect([...actual].filter((k) => !all.has(k)), 'exported but not typed').toEqual([]);
    expect([...all].filter((k) => !actual.has(k) && !optional.has(k)), 'typed but not exported').toEqual([]);
  });
});

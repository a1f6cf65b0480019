// The README's TypeScript examples compile against the public API, imported by the package name as a user would, so
// the documentation cannot drift from the code unnoticed. Each ```ts block is type-checked as its own module, placed
// (in memory) inside the package so that 'lamer' resolves to src/index.ts through package.json's exports (the
// 'lamer-source' condition tsconfig.json sets; a user's project without it gets dist/index.d.ts).
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Names the examples take as given (the reader's environment class, a loaded policy, prompt ids), declared for the check. */
const GIVEN: Record<string, string> = {
  MyEnvironment: "declare const MyEnvironment: new (evaluation: boolean) => import('lamer').Environment;",
  policy: "declare const policy: import('lamer').Policy;",
  promptIds: 'declare const promptIds: number[];',
};

function readmeBlocks(): string[] {
  return [...readFileSync(join(root, 'README.md'), 'utf8').matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]);
}

function withGivens(code: string): string {
  const declares = (name: string) => new RegExp(`\\b(?:const|let|var|class|function)\\s+${name}\\b`).test(code);
  const givens = Object.entries(GIVEN).filter(([name]) => new RegExp(`\\b${name}\\b`).test(code) && !declares(name));
  return `${givens.map(([, d]) => d).join('\n')}\n${code}\nexport {};\n`;
}

/** Type errors of `modules` (code by file name), each compiled as a module inside the package. */
function typeErrors(modules: string[]): string[] {
  const config = ts.readConfigFile(join(root, 'tsconfig.json'), ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
  const files = new Map(modules.map((code, i) => [join(root, 'test', 'docs', `readme-example-${i}.ts`), code]));
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, language, onError, create) => {
    const code = files.get(resolve(name));
    return code !== undefined ? ts.createSourceFile(name, code, language) : getSourceFile(name, language, onError, create);
  };
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => files.has(resolve(name)) || fileExists(name);
  const readFile = host.readFile.bind(host);
  host.readFile = (name) => files.get(resolve(name)) ?? readFile(name);
  const program = ts.createProgram([...files.keys()], { ...options, noEmit: true }, host);
  return ts
    .getPreEmitDiagnostics(program)
    .filter((d) => d.file && files.has(resolve(d.file.fileName)))
    .map((d) => `${d.file!.fileName}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
}

describe('README examples', () => {
  it('type-check against the public API', () => {
    const blocks = readmeBlocks();
    expect(blocks.length).toBeGreaterThanOrEqual(2);
    expect(typeErrors(blocks.map(withGivens))).toEqual([]);
  });

  it('would report an example that uses the API wrongly', () => {
    const wrong = "import { Trainer } from 'lamer';\nconst t = new Trainer({ name: 'x' });\nawait t.runn();\n";
    const errors = typeErrors([withGivens(wrong)]);
    expect(errors.join('\n')).toMatch(/runn/);
  });
});

// ESLint over the TypeScript sources, tests and benches (`npm run lint`, part of CI): typescript-eslint's
// recommended rules, no import cycles, and the floor order of src/ as restricted imports (a floor imports only floors
// below it), so a layering mistake fails the lint rather than showing up as a load-order bug.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

// src/ from the bottom floor up: each may import only the ones before it.
const FLOORS = [
  'errors',
  'util',
  'native',
  'tensor',
  'model',
  'envs',
  'agent',
  'rollout',
  'engine',
  'algo',
  'eval',
  'train',
  'report',
  'serve',
  'cli',
  'index',
];
const path = (floor) => (floor === 'errors' || floor === 'tensor' || floor === 'index' ? `./src/${floor}.ts` : `./src/${floor}`);

// Inside an environment split into adapter and engine, the same order: each folder imports only the folders before it
// (ALFWorld: the engine, then the game sources; WebShop: its engine's data, search, reward and site), and the adapter
// (the files at the top) all of them.
const INNER_FLOORS = [
  { dir: './src/envs/alfworld', floors: ['engine', 'games'] },
  { dir: './src/envs/webshop', floors: ['data', 'search', 'reward', 'site'] },
];
const innerZones = INNER_FLOORS.flatMap(({ dir, floors }) =>
  floors.map((floor, i) => ({
    target: `${dir}/${floor}`,
    from: dir,
    except: floors.slice(0, i + 1).map((f) => `./${f}`),
    message: `${dir.slice(2)}/${floor} is below these (${[...floors, 'the adapter'].join(' < ')})`,
  })),
);

export default tseslint.config(
  { ignores: ['dist/**', 'build/**', 'build-*/**', 'libtorch/**', '.venv/**', '.device/**', 'runs/**', 'node_modules/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
    },
    rules: {
      'import-x/no-cycle': 'error',
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: FLOORS.slice(0, -1)
            .map((floor, i) => ({
              target: path(floor),
              from: FLOORS.slice(i + 1).map(path),
              message: `src/${floor} is below these floors (${FLOORS.join(' < ')})`,
            }))
            .concat(innerZones),
        },
      ],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', caughtErrors: 'none' },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: globals.node },
  },
);

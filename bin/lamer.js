#!/usr/bin/env node
// Entry point of the `lamer` command: runs the TypeScript CLI through tsx's loader.
import { register } from 'tsx/esm/api';

register();
process.env.LAMER_CLI_ENTRY = '1';
await import('../src/cli/main.ts');

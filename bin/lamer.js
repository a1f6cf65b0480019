#!/usr/bin/env node
// @ts-check
// Entry point of the `lamer` command: runs the TypeScript CLI through tsx's loader.
import { register } from 'tsx/esm/api';

register();
process.env.LAMER_CLI_ENTRY = '1';
await import('../src/cli/main.ts');

// ESLint: TypeScript rules everywhere, and determinism enforced under workflows/:
// no Node built-ins, no I/O libraries, no activity code (type imports only).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];
const ioLibraries = ['pg', 'knex', 'koa', '@koa/router', 'koa-body', 'pino', 'nodemailer', 'axios', 'undici', 'node-fetch', 'sharp', 'qrcode',
  '@sentry/node', '@temporalio/client', '@temporalio/worker', '@temporalio/activity', 'rate-limiter-flexible', 'supertest'];

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', '.data/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: { globals: { module: 'writable', require: 'readonly', __dirname: 'readonly', process: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [...nodeBuiltins, ...ioLibraries].map((name) => ({ name, message: 'workflows/ must stay deterministic: do I/O in an activity' })),
          patterns: [
            { group: ['**/activities', '**/activities/*'], allowTypeImports: true, message: 'import activities with `import type` only (proxyActivities)' },
            { group: ['**/src/http/**', '**/src/db/**', '**/src/stack/**', '**/src/temporal/**', '**/src/config', '**/src/ids', '**/src/logger'], message: 'workflows/ may import src/domain only' },
          ],
        },
      ],
      'no-restricted-globals': ['error', { name: 'process', message: 'no process in workflows' }, { name: 'fetch', message: 'no I/O in workflows' }, { name: 'setInterval', message: 'use workflow timers' }],
    },
  },
  {
    files: ['src/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: [...nodeBuiltins, ...ioLibraries].map((name) => ({ name, message: 'src/domain is pure: no I/O' })) }],
    },
  },
);

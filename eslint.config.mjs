// ESLint: TypeScript rules everywhere, and the layers enforced as allow-lists:
//  - workflows/ (deterministic, bundled into the workflow sandbox) may import only
//    @temporalio/workflow, other workflow files, src/domain/** and a feature's face
//    (src/<feature>, its index.ts: the feature's Temporal contract) and, type-only,
//    activities/**; no process, fetch or setInterval either;
//  - src/domain/ and each feature's face, src/<feature>/index.ts (pure code), import only
//    src/domain, other faces and the pure libraries listed below;
//  - workflows/ and activities/: every promise is awaited or handled (type-aware
//    no-floating-promises), so a missing `await` on an activity does not pass.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const FEATURES = '(payments|refunds|callbacks|webhooks|checkout|reconciliation|bank|storefront|links|orders)';
/** what a workflow file may import, from workflows/ (top) or a feature's folder under it (nested) */
const WORKFLOW_TOP = `^(?!@temporalio/workflow$|\\./|\\.\\./src/domain/|\\.\\./src/${FEATURES}$|\\.\\./activities(/|$))`;
const WORKFLOW_NESTED = `^(?!@temporalio/workflow$|\\./|\\.\\./(?!\\.\\./)|\\.\\./\\.\\./src/domain/|\\.\\./\\.\\./src/${FEATURES}$|\\.\\./\\.\\./activities(/|$))`;
const DOMAIN_MAY_IMPORT = ['./', '@temporalio/workflow', '@temporalio/common', 'zod'];
/** a feature's face (src/<feature>/index.ts, its contract): like src/domain, plus src/domain and other faces */
const FACE_FILES = ['src/*/index.ts'];
const FACE_MAY_NOT_IMPORT = `^(?!\\.\\./domain/|\\.\\./${FEATURES}$|@temporalio/workflow$|@temporalio/common$|zod$)`;
const workflowImports = (regex) => [
  'error',
  {
    patterns: [
      {
        regex,
        message:
          'workflows/ may import only @temporalio/workflow, workflows/, src/domain/**, a feature face (src/<feature>) and type-only activities/**: do I/O in an activity',
      },
      {
        regex: '^(\\.\\./)+activities(/|$)',
        allowTypeImports: true,
        message: 'import activities with `import type` only (proxyActivities)',
      },
    ],
  },
];
const escape = (s) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
/** Every import source that does not start with (or equal, for a package) one of `allowed`. */
const notOneOf = (allowed) =>
  `^(?!(${allowed.map((a) => (a.endsWith('/') ? escape(a) : `${escape(a)}(/|$)`)).join('|')}))`;

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', '.data/**', '.data-*/**', 'coverage/**'] },
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
    languageOptions: {
      globals: { module: 'writable', require: 'readonly', __dirname: 'readonly', process: 'readonly' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['workflows/*.ts'],
    rules: { 'no-restricted-imports': workflowImports(WORKFLOW_TOP) },
  },
  {
    files: ['workflows/*/**/*.ts'],
    rules: { 'no-restricted-imports': workflowImports(WORKFLOW_NESTED) },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-globals': [
        'error',
        { name: 'process', message: 'no process in workflows' },
        { name: 'fetch', message: 'no I/O in workflows' },
        { name: 'setInterval', message: 'use workflow timers' },
      ],
    },
  },
  {
    // the workflow bundle preloads these modules once per worker, shared by every workflow
    // (src/app/worker.ts WORKFLOW_BUNDLER_OPTIONS): a module-level variable would be shared state
    files: ['workflows/**/*.ts', 'src/domain/**/*.ts', ...FACE_FILES],
    rules: {
      'no-restricted-syntax': [
        'error',
        ...['Program > VariableDeclaration', 'Program > ExportNamedDeclaration > VariableDeclaration'].map((at) => ({
          selector: `${at}[kind=/^(let|var)$/]`,
          message:
            'the workflow bundle shares this module between workflows (preloadModules): no module-level let or var',
        })),
      ],
    },
  },
  {
    files: ['src/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: notOneOf(DOMAIN_MAY_IMPORT),
              message: 'src/domain is pure: it imports only src/domain and pure libraries, no I/O',
            },
          ],
        },
      ],
    },
  },
  {
    files: FACE_FILES,
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: FACE_MAY_NOT_IMPORT,
              message:
                "a feature's face (its contract) is pure: it imports only src/domain, other faces and pure libraries",
            },
          ],
        },
      ],
    },
  },
  {
    files: ['workflows/**/*.ts', 'activities/**/*.ts'],
    // probe.ts: the file name test/lint.test.ts lints its probes as (they exist only on stdin)
    languageOptions: {
      parserOptions: {
        projectService: {
          allowDefaultProject: ['workflows/probe.ts', 'activities/probe.ts'],
          defaultProject: 'tsconfig.json',
        },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: { '@typescript-eslint/no-floating-promises': 'error' },
  },
);

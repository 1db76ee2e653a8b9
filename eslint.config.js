// ESLint over the TypeScript: typescript-eslint's recommended rules, minus the few that the code base
// breaks on purpose (each turned off below with its reason).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['build/', '.gpu-carry/', 'dist/', 'node_modules/', 'native/', 'clients/typescript/dist/', 'clients/python/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      // `any` is the honest type of parsed JSON in test helpers and of a few N-API values.
      '@typescript-eslint/no-explicit-any': 'off',
      // Validators and parsers match control characters on purpose.
      'no-control-regex': 'off',
      // `const { dropped: _, ...rest } = obj` is how a field is left out.
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true, argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['test/**/*.ts', 'test-gpu/**/*.ts'],
    // chai's property assertions (`expect(x).to.be.true`) are expressions.
    rules: { '@typescript-eslint/no-unused-expressions': 'off' },
  },
);

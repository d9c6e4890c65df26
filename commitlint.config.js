// Commit messages (docs/architecture.md "Short comments, short commits"): a subject of at most 72
// characters, the detail in the body. Checked by test/commits.test.ts; by hand: npx commitlint --from HEAD~1
module.exports = {
  rules: {
    'header-max-length': [2, 'always', 72],
  },
};

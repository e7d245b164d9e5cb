import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';

/**
 * Docs are maps: every file or folder of the repository that README.md or docs/*.md names in backticks
 * must exist. A name is taken as a path when it starts at one of the repository's folders
 * (`src/…`, `test/…`) or ends in a source or document extension; it resolves from the root, from
 * `src/` or `test/` (the docs write `common/http/conditional.ts` for `src/common/http/conditional.ts`),
 * or, written as a bare file name or a partial path, as the end of one file's path.
 */
const root = join(__dirname, '..', '..');
const ROOTS = ['src/', 'test/', 'docs/', 'bench/', 'scripts/', 'db/', 'deploy/', '.ci/'];
const EXTENSION = /\.(?:ts|mjs|cjs|js|md|json|jsonc|sh|conf|ya?ml)$/;

function filesUnder(dir: string, into: string[] = []): string[] {
  for (const entry of readdirSync(join(root, dir))) {
    if (entry === 'node_modules' || entry === 'dist' || entry.startsWith('.git')) continue;
    const path = dir ? `${dir}/${entry}` : entry;
    if (statSync(join(root, path)).isDirectory()) filesUnder(path, into);
    else into.push(path);
  }
  return into;
}

const repositoryFiles = ['src', 'test', 'bench', 'scripts', 'db', 'deploy', 'docs', '.ci'].flatMap((dir) => filesUnder(dir)).concat(readdirSync(root));

function namedPaths(markdown: string): string[] {
  return [...markdown.matchAll(/`([^`\n]+)`/g)]
    .map((match) => match[1].trim())
    .filter((name) => !/[\s<>{}*$|()=,;"'…:]/.test(name))
    .filter((name) => ROOTS.some((start) => name.startsWith(start)) || EXTENSION.test(name));
}

function exists(name: string): boolean {
  const path = name.replace(/\/$/, '');
  if (['', 'src/', 'test/'].some((prefix) => existsSync(join(root, prefix + path)))) return true;
  const suffix = path.includes('/') ? `/${path}` : undefined;
  return repositoryFiles.some((file) => (suffix ? file.endsWith(suffix) : basename(file) === path));
}

describe('docs name only what exists', () => {
  const docs = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
  it.each(docs)('%s', (doc) => {
    const missing = [...new Set(namedPaths(readFileSync(join(root, doc), 'utf8')).filter((name) => !exists(name)))];
    expect(missing).toEqual([]);
  });
});

describe('docs/ARCHITECTURE.md maps every module', () => {
  const architecture = readFileSync(join(root, 'docs', 'ARCHITECTURE.md'), 'utf8');
  const modules = readdirSync(join(root, 'src')).filter((entry) => statSync(join(root, 'src', entry)).isDirectory());
  it.each(modules)('src/%s', (module) => {
    expect(architecture).toMatch(new RegExp(`\`(?:src/)?${module}/?\``));
  });
});

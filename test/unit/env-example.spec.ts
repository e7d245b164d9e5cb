import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/app-config';

const root = join(__dirname, '..', '..');

describe('.env.example', () => {
  const example = readFileSync(join(root, '.env.example'), 'utf8');
  const listed = [...example.matchAll(/^([A-Z_]+)=/gm)].map((match) => match[1]);

  it('lists every variable the configuration reads, and no other', () => {
    const read = [...readFileSync(join(root, 'src', 'config', 'app-config.ts'), 'utf8').matchAll(/read\.\w+\('([A-Z_]+)'/g)].map((match) => match[1]);
    expect([...listed].sort()).toEqual([...new Set([...read, 'CORS_ORIGINS'])].sort());
  });

  it('is a valid configuration as it stands', () => {
    const env = Object.fromEntries([...example.matchAll(/^([A-Z_]+)=(.*)$/gm)].map((match) => [match[1], match[2]]));
    expect(() => loadConfig(env)).not.toThrow();
  });
});

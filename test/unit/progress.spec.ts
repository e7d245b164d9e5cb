import { PassThrough } from 'node:stream';
import { progressBar } from '../../src/cli/progress';

describe('the CLI progress line', () => {
  it('gives its rate a unit: what the bar counts, per second', () => {
    const stream = new PassThrough() as unknown as NodeJS.WriteStream & PassThrough;
    let printed = '';
    stream.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    const progress = progressBar({ label: 'generating', total: 10, unit: 'places' }, stream);
    progress.update(10, '10 written');
    progress.stop();
    expect(printed).toMatch(/generating \[.*\] 100% \| 10\/10 places \| \d+ places\/s \| ETA .* \| 10 written/);
    expect(printed).not.toMatch(/\d\/s/);
  });
});

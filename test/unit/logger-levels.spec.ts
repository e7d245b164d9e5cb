import { PassThrough } from 'node:stream';
import { createLogger, NestPinoLogger } from '../../src/common/logging/logger';

/** The lines a NestPinoLogger at `level` writes for `write`, as parsed JSON. */
function linesAt(level: 'info' | 'debug', write: (logger: NestPinoLogger) => void): { level: string; context?: string; msg: string }[] {
  const stream = new PassThrough();
  const chunks: string[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk.toString()));
  write(new NestPinoLogger(createLogger(level, stream)));
  return chunks
    .join('')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

const boot = (logger: NestPinoLogger) => {
  logger.log('Starting Nest application...', 'NestFactory');
  logger.log('AppModule dependencies initialized', 'InstanceLoader');
  logger.log('TwinsController {/twins}:', 'RoutesResolver');
  logger.log('Mapped {/twins, GET} route', 'RouterExplorer');
  logger.log('Nest application successfully started', 'NestApplication');
  logger.log('database: embedded PGlite at ./data', 'Database');
  logger.warn('a module is slow', 'InstanceLoader');
};

describe("Nest's boot lines", () => {
  it('are debug lines: a start at info shows the service\'s own lines and every warning', () => {
    expect(linesAt('info', boot).map(({ level, context, msg }) => ({ level, context, msg }))).toEqual([
      { level: 'info', context: 'Database', msg: 'database: embedded PGlite at ./data' },
      { level: 'warn', context: 'InstanceLoader', msg: 'a module is slow' },
    ]);
  });

  it("are debug lines as the server's bundle names Nest's classes (`_RouterExplorer`), and carry the classes' own names", () => {
    const bundled = (logger: NestPinoLogger) => {
      logger.log('Mapped {/twins, GET} route', '_RouterExplorer');
      logger.warn('a module is slow', '_InstanceLoader');
    };
    expect(linesAt('info', bundled).map(({ level, context }) => `${level} ${context}`)).toEqual(['warn InstanceLoader']);
    expect(linesAt('debug', bundled).map(({ level, context }) => `${level} ${context}`)).toEqual(['debug RouterExplorer', 'warn InstanceLoader']);
  });

  it('are all there at LOG_LEVEL=debug', () => {
    const lines = linesAt('debug', boot);
    expect(lines.map(({ level, context }) => `${level} ${context}`)).toEqual([
      'debug NestFactory',
      'debug InstanceLoader',
      'debug RoutesResolver',
      'debug RouterExplorer',
      'debug NestApplication',
      'info Database',
      'warn InstanceLoader',
    ]);
  });
});

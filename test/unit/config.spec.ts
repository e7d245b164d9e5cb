import { ConfigError, loadConfig } from '../../src/config/app-config';

describe('loadConfig', () => {
  it('has working defaults', () => {
    const config = loadConfig({});
    expect(config).toEqual(expect.objectContaining({ port: 3000, dataDir: './data', databaseUrl: undefined, adminToken: undefined, pageSizeDefault: 50, pageSizeMax: 100 }));
  });

  it('names every bad variable at once', () => {
    try {
      loadConfig({ PORT: 'eighty', LOG_LEVEL: 'loud', DATABASE_URL: 'mysql://x', ADMIN_TOKEN: 'short' });
      throw new Error('accepted');
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const names = (error as ConfigError).problems.map((problem) => problem.split(' ')[0]);
      expect(names).toEqual(expect.arrayContaining(['PORT', 'LOG_LEVEL', 'DATABASE_URL', 'ADMIN_TOKEN']));
    }
  });
});

import { AdminService } from '../../admin/admin.service.js';
import { isUuid } from '../../common/json-api/query.js';
import { CliCommand, CliUsageError, requireString } from '../cli-command.js';

const admin = (context: { app?: { get<T>(type: new (...args: never[]) => T): T } }) => context.app!.get(AdminService);

const print = (out: (line: string) => void, value: unknown) => out(JSON.stringify(value, null, 2));

export const bootstrapCommand: CliCommand = {
  name: 'bootstrap',
  summary: 'Create an organization, an account in it, a first twin and an access token, and print them',
  usage: 'bootstrap [--organization NAME] [--account NAME] [--twin NAME] [--json]',
  options: {
    organization: { type: 'string', default: 'My organization' },
    account: { type: 'string', default: 'Me' },
    twin: { type: 'string', default: 'My twin' },
    json: { type: 'boolean', default: false },
  },
  needsDatabase: true,
  async run(context) {
    const result = await admin(context).bootstrap({
      organization: context.values.organization as string,
      account: context.values.account as string,
      twin: context.values.twin as string,
    });
    if (context.values.json) {
      context.out(JSON.stringify(result));
      return;
    }
    context.out(`organization  ${result.organizationId}`);
    context.out(`account       ${result.accountId}`);
    context.out(`twin          ${result.twinId}`);
    context.out(`token id      ${result.tokenId}`);
    context.out(`token         ${result.token}   (shown once; keep it)`);
    context.out('');
    context.out('Try it:');
    context.out(`  curl -H 'Authorization: Token ${result.token}' -H 'X-Organization: ${result.organizationId}' http://localhost:3000/organizations/`);
  },
};

export const createOrganizationCommand: CliCommand = {
  name: 'create-organization',
  summary: 'Create an organization',
  usage: 'create-organization --name NAME',
  options: { name: { type: 'string' } },
  needsDatabase: true,
  async run(context) {
    print(context.out, await admin(context).createOrganization(requireString(context, 'name', this.usage)));
  },
};

export const createAccountCommand: CliCommand = {
  name: 'create-account',
  summary: 'Create an account, member of one or more organizations',
  usage: 'create-account --name NAME --organization ORG_ID [--organization ORG_ID …]',
  options: { name: { type: 'string' }, organization: { type: 'string', multiple: true } },
  needsDatabase: true,
  async run(context) {
    const organizations = (context.values.organization as string[] | undefined) ?? [];
    if (organizations.some((id) => !isUuid(id))) throw new CliUsageError(`--organization takes organization ids\nusage: ${this.usage}`);
    print(context.out, await admin(context).createAccount(requireString(context, 'name', this.usage), organizations));
  },
};

export const createTokenCommand: CliCommand = {
  name: 'create-token',
  summary: 'Mint an access token for an account (printed once)',
  usage: 'create-token --account ACCOUNT_ID [--expires ISO_TIMESTAMP]',
  options: { account: { type: 'string' }, expires: { type: 'string' } },
  needsDatabase: true,
  async run(context) {
    const account = requireString(context, 'account', this.usage);
    if (!isUuid(account)) throw new CliUsageError(`--account takes an account id\nusage: ${this.usage}`);
    const expires = context.values.expires as string | undefined;
    if (expires !== undefined && Number.isNaN(Date.parse(expires))) throw new CliUsageError('--expires must be an ISO 8601 timestamp');
    print(context.out, await admin(context).createToken(account, expires));
  },
};

export const revokeTokenCommand: CliCommand = {
  name: 'revoke-token',
  summary: 'Revoke an access token by its id; it stops working at once',
  usage: 'revoke-token --token-id TOKEN_ID',
  options: { 'token-id': { type: 'string' } },
  needsDatabase: true,
  async run(context) {
    const id = requireString(context, 'token-id', this.usage);
    if (!isUuid(id)) throw new CliUsageError(`--token-id takes a token id\nusage: ${this.usage}`);
    await admin(context).revokeToken(id);
    context.out(`revoked ${id}`);
  },
};

import { AdminService } from '../../admin/admin.service.js';
import { firstSteps } from '../../admin/first-steps.js';
import { isUuid } from '../../common/value-checks.js';
import { CliCommand, CliContext, CliUsageError, requireString, uuidOption } from '../cli-command.js';

const admin = (context: CliContext) => context.app!.get(AdminService);

const print = (out: (line: string) => void, value: unknown) => out(JSON.stringify(value, null, 2));

export const bootstrapCommand: CliCommand = {
  name: 'bootstrap',
  summary: 'Create an organization, an account in it, a first twin and an access token, and print them',
  usage: 'bootstrap [--organization NAME] [--account NAME] [--twin NAME] [--json]',
  options: {
    organization: { type: 'string', default: 'My organization', value: 'NAME', description: 'name of the new organization' },
    account: { type: 'string', default: 'Me', value: 'NAME', description: 'name of the new account' },
    twin: { type: 'string', default: 'My twin', value: 'NAME', description: 'name of the first twin' },
    json: { type: 'boolean', default: false, description: 'print one JSON object (for scripts)' },
  },
  examples: ['bootstrap', 'bootstrap --organization "City tours" --account Ana --twin "River walks"', 'bootstrap --json'],
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
    for (const line of firstSteps(result, context.baseUrl)) context.out(line);
  },
};

export const createOrganizationCommand: CliCommand = {
  name: 'create-organization',
  summary: 'Create an organization',
  usage: 'create-organization --name NAME',
  options: { name: { type: 'string', value: 'NAME', description: 'its name (required)' } },
  examples: ['create-organization --name "City tours"'],
  needsDatabase: true,
  async run(context) {
    print(context.out, await admin(context).createOrganization(requireString(context, 'name')));
  },
};

export const createAccountCommand: CliCommand = {
  name: 'create-account',
  summary: 'Create an account, member of one or more organizations',
  usage: 'create-account --name NAME --organization ORG_ID [--organization ORG_ID …]',
  options: {
    name: { type: 'string', value: 'NAME', description: 'its name (required)' },
    organization: { type: 'string', multiple: true, value: 'ORG_ID', description: 'an organization it belongs to' },
  },
  examples: ['create-account --name Ana --organization ORG_ID', 'create-account --name Ben --organization ORG_ID --organization OTHER_ORG_ID'],
  needsDatabase: true,
  async run(context) {
    const organizations = (context.values.organization as string[] | undefined) ?? [];
    const bad = organizations.find((id) => !isUuid(id));
    if (bad !== undefined) throw new CliUsageError(`--organization takes organization ids (UUIDs), got "${bad}"`);
    print(context.out, await admin(context).createAccount(requireString(context, 'name'), organizations));
  },
};

export const createTokenCommand: CliCommand = {
  name: 'create-token',
  summary: 'Mint an access token for an account (printed once)',
  usage: 'create-token --account ACCOUNT_ID [--expires ISO_TIMESTAMP]',
  options: {
    account: { type: 'string', value: 'ACCOUNT_ID', description: 'the account the token acts as (required)' },
    expires: { type: 'string', value: 'ISO_TIMESTAMP', description: 'when it stops working (never, when absent)' },
  },
  examples: ['create-token --account ACCOUNT_ID', 'create-token --account ACCOUNT_ID --expires 2027-01-01T00:00:00Z'],
  needsDatabase: true,
  async run(context) {
    const account = uuidOption(context, 'account', 'an account');
    const expires = context.values.expires as string | undefined;
    if (expires !== undefined && Number.isNaN(Date.parse(expires))) throw new CliUsageError(`--expires must be an ISO 8601 timestamp, got "${expires}"`);
    print(context.out, await admin(context).createToken(account, expires));
  },
};

export const revokeTokenCommand: CliCommand = {
  name: 'revoke-token',
  summary: 'Revoke an access token by its id; it stops working at once',
  usage: 'revoke-token --token-id TOKEN_ID',
  options: { 'token-id': { type: 'string', value: 'TOKEN_ID', description: 'the id printed with the token (required)' } },
  examples: ['revoke-token --token-id TOKEN_ID'],
  needsDatabase: true,
  async run(context) {
    const id = uuidOption(context, 'token-id', 'a token');
    await admin(context).revokeToken(id);
    context.out(`revoked ${id}`);
  },
};

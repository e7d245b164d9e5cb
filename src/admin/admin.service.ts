import { Injectable } from '@nestjs/common';
import { Sql } from '../database/sql.js';
import { AccountsRepository } from '../accounts/accounts.repository.js';
import { Credentials } from '../common/auth/credentials.js';
import { generateToken } from '../common/auth/tokens.js';
import { invalidDocument, notFound, ApiError } from '../common/json-api/api-error.js';
import type { ResourceObject } from '../common/json-api/resource.js';
import { organizationResource } from '../organizations/organization.resource.js';
import { OrganizationsRepository } from '../organizations/organizations.repository.js';
import { TwinsRepository } from '../twins/twins.repository.js';

export interface BootstrapResult {
  organizationId: string;
  accountId: string;
  twinId: string;
  tokenId: string;
  token: string;
}

/** Operator actions, shared by the admin API and the command-line tool. */
@Injectable()
export class AdminService {
  constructor(
    private readonly sql: Sql,
    private readonly organizations: OrganizationsRepository,
    private readonly accounts: AccountsRepository,
    private readonly twins: TwinsRepository,
    private readonly credentials: Credentials,
  ) {}

  async createOrganization(name: string): Promise<ResourceObject> {
    return organizationResource(await this.organizations.create(name));
  }

  async createAccount(name: string, organizationIds: string[]): Promise<ResourceObject> {
    const unique = [...new Set(organizationIds)];
    const account = await this.sql.transaction(async () => {
      const found = await this.organizations.existing(unique);
      const missing = unique.findIndex((id) => !found.has(id));
      if (missing >= 0) {
        throw new ApiError(404, 'not_found', 'Not found', `Organization ${unique[missing]} does not exist.`, {
          pointer: `/data/relationships/organizations/data/${organizationIds.indexOf(unique[missing])}`,
        });
      }
      return this.accounts.create(name, unique);
    });
    return {
      type: 'accounts',
      id: account.id,
      attributes: { name: account.name, created: account.created, modified: account.modified },
      relationships: { organizations: { data: account.organization_ids.map((id) => ({ type: 'organizations', id })) } },
    };
  }

  async createToken(accountId: string, expires: string | undefined): Promise<ResourceObject> {
    if (expires !== undefined && Date.parse(expires) <= Date.now()) {
      throw invalidDocument('expires must be in the future.', '/data/attributes/expires');
    }
    if (!(await this.accounts.exists(accountId))) throw notFound('No such account.');
    const token = generateToken();
    const row = await this.accounts.createToken(accountId, token, expires ?? null);
    return {
      type: 'tokens',
      id: row.id,
      attributes: { token, created: row.created, expires: row.expires },
      relationships: { account: { data: { type: 'accounts', id: accountId } } },
    };
  }

  async revokeToken(tokenId: string): Promise<void> {
    if (!(await this.accounts.revokeToken(tokenId))) throw notFound('No such live token.');
    // Other instances hear of it from the trigger's notice; this one stops answering from its cache now.
    this.credentials.forget();
  }

  /** Everything a first run needs, created atomically: organization, account, a twin and a token. */
  async bootstrap(names: { organization: string; account: string; twin: string }): Promise<BootstrapResult> {
    return this.sql.transaction(async () => {
      const organization = await this.organizations.create(names.organization);
      const account = await this.accounts.create(names.account, [organization.id]);
      const twin = await this.twins.insertOwned({
        organizationId: organization.id,
        ownerAccountId: account.id,
        name: names.twin,
        personal: true,
      });
      const token = generateToken();
      const tokenRow = await this.accounts.createToken(account.id, token, null);
      return { organizationId: organization.id, accountId: account.id, twinId: twin.id, tokenId: tokenRow.id, token };
    });
  }
}

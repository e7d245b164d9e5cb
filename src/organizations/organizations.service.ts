import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { notFound } from '../common/json-api/api-error.js';
import { sparseResource, type Fieldsets } from '../common/json-api/representation.js';
import { loadPage, type Page, pageRequest } from '../common/json-api/pagination.js';
import type { RequestAuth } from '../common/auth/tenant.js';
import { organizationResource } from './organization.resource.js';
import { OrganizationsRepository } from './organizations.repository.js';
import type { OrganizationListQuery } from './organization-query.js';
import type { ResourceObject } from '../common/json-api/resource.js';

@Injectable()
export class OrganizationsService {
  constructor(
    private readonly organizations: OrganizationsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async list(caller: RequestAuth, query: OrganizationListQuery): Promise<Page<ResourceObject[]>> {
    const page = pageRequest(query.page, { defaultSize: this.config.pageSizeDefault, maxSize: this.config.pageSizeMax });
    return loadPage(
      page,
      () => this.organizations.countForAccount(caller.account.id),
      () => this.organizations.pageForAccount(caller.account.id, page),
      (row) => sparseResource(organizationResource(row), query.fields),
    );
  }

  /** An organization the caller is not a member of is indistinguishable from one that does not exist. */
  async get(caller: RequestAuth, organizationId: string, fields: Fieldsets = {}): Promise<ResourceObject> {
    const row = await this.organizations.findForAccount(caller.account.id, organizationId);
    if (!row) throw notFound('No such organization.');
    return sparseResource(organizationResource(row), fields);
  }
}

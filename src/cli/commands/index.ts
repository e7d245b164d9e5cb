import type { CliCommand } from '../cli-command.js';
import { simulateFleetCommand } from './fleet.command.js';
import { migrateCommand } from './migrate.command.js';
import { generatePlacesCommand, importPlacesCommand } from './places.commands.js';
import {
  bootstrapCommand,
  createAccountCommand,
  createOrganizationCommand,
  createTokenCommand,
  revokeTokenCommand,
} from './tenancy.commands.js';

/** Every CLI command; modules add theirs here. */
export const commands: CliCommand[] = [
  bootstrapCommand,
  createOrganizationCommand,
  createAccountCommand,
  createTokenCommand,
  revokeTokenCommand,
  generatePlacesCommand,
  importPlacesCommand,
  simulateFleetCommand,
  migrateCommand,
];

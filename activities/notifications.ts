/** Notifications as activities: a workflow's way to reach the administrator and the error tracker. */
import type { Config } from '../src/config';
import type { Logger } from '../src/logger';
import { createNotifier, type AdminEmail, type ErrorReport, type Notifier } from '../src/notifier';

export function createNotificationActivities(deps: { config: Config; logger: Logger }) {
  let notifier: Notifier | undefined;
  const get = () => (notifier ??= createNotifier(deps));
  return {
    async notifyAdmin(mail: AdminEmail): Promise<void> {
      await get().sendAdminEmail(mail);
    },
    async reportError(report: ErrorReport): Promise<void> {
      await get().reportError(report);
    },
  };
}

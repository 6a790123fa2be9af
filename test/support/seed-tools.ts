/** The tool extension's 13 tools, in the order of the seed's table (written out here, not taken from src). */
export const seedToolNames = [
  'monitor_discover',
  'monitor_list',
  'monitor_get',
  'monitor_create',
  'monitor_configure',
  'monitor_publish',
  'monitor_state',
  'monitor_subscribe',
  'monitor_pull',
  'monitor_ack',
  'lease_claim',
  'lease_complete',
  'lease_release',
];

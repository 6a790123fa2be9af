// The seed's webhook shapes as they travel on the wire: the server renders
// them and the SDK client returns them, so both import them from here.

export interface WebhookRegistration {
  id: string;
  event: string;
  url: string;
  active: 'true' | 'false';
  created_at: string;
}

export interface WebhookTestResult {
  delivered: boolean;
  response_code?: number;
  error?: string;
}

export interface DeliveryView {
  id: string;
  event: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: string | null;
  response_code: number | null;
  error: string | null;
  created_at: string;
  updated_at: string;
}

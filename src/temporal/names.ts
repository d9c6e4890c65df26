/** Names shared by the gateway, the worker and the workflows. */
export const SIGNALS = { paymentResult: 'paymentResult' } as const;
export const QUERIES = { payment: 'payment' } as const;
export const UPDATES = { charge: 'charge' } as const;
export const WORKFLOWS = { card: 'cardPaymentWorkflow', qr: 'qrPaymentWorkflow', bank: 'bankRequestWorkflow' } as const;

// The API client's failures, as the tests look at them.
import { expect } from 'vitest';
import { ApiError } from '../../src/api/index.ts';

/** The ApiError a promise rejects with; fails the test if it resolves or rejects with something else. */
export async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    return err as ApiError;
  }
  throw new Error('expected a rejection');
}

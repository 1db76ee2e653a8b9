// The engine's bounds on trains (native/core/include/ttstore/limits.hpp), read once from the addon, so
// that the request schemas, the checks before any work and the engine itself share one number each.
import { native } from './index.js';

const limits = native().limits;

/** Largest bond dimension of a stored train, and the largest max_rank a request may give. */
export const MAX_RANK: number = limits.maxRank;

/**
 * Largest work (multiply-adds, Engine.trainWork's `max`) of one engine call on a train that
 * put_cores stores: about a tenth of a second of a 2-core host.
 */
export const MAX_TRAIN_WORK: number = limits.maxTrainWork;

/** A dense rebuild may also take this many multiply-adds per value of the array, when that is more. */
export const MAX_REBUILD_WORK_PER_VALUE: number = limits.maxRebuildWorkPerValue;

/**
 * Largest estimated work (multiply-adds) of one engine turn of a request whose work comes in pieces:
 * a top-K scores its candidates in chunks of at most this much (at least one candidate a chunk).
 */
export const MAX_TURN_WORK: number = limits.maxTurnWork;

/**
 * Largest estimated work (multiply-adds) of engine work that runs in the admission's light lane,
 * beside heavy calls instead of behind them: a few milliseconds of one core.
 */
export const LIGHT_TURN_WORK: number = limits.lightTurnWork;

/**
 * A selection (serve's level, region and points) may take MAX_TRAIN_WORK multiply-adds, or this many
 * per value it returns when that is more.
 */
export const MAX_SELECTION_WORK_PER_VALUE: number = limits.maxSelectionWorkPerValue;

/**
 * Estimated work of compressing `values` values in `layouts` layouts: a QTT-SVD of full ranks does
 * about values^1.5 multiply-adds (each unfolding's Gram is its size times its short side), a smooth
 * array far fewer. The engine choosing the layout (no layout given) sweeps both at most, after a
 * probe on at most 1/64 of the values.
 */
export function compressWork(values: number, layouts: 1 | 2 = 2): number {
  const sweep = values * Math.sqrt(values);
  return layouts === 1 ? sweep : 2 * sweep + (values / 64) * Math.sqrt(values / 64) * 2;
}

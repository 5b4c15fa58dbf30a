import { BadRequest, Conflict, NotImplemented } from '../../platform/errors.js';
import type { ExperimentsService } from '../experiments/service.js';
import { SPLIT_URL_NOT_AVAILABLE } from '../experiments/service.js';
import { readStoredSplitUrlConfig } from './config.js';
import { pickByAllocation, previewBucket } from './pick.js';
import type { SplitUrlPreview } from './schemas.js';

export const NOT_SPLIT_URL = 'This experiment is not a split_url experiment';
export const NO_SPLIT_URL_CONFIG = 'This experiment has no split_url_config';
export const STORED_CONFIG_INVALID =
  'The stored split_url_config is not valid; update it with PUT /api/v1/experiments/{experiment_id}';

export interface SplitUrlService {
  preview(experimentId: string, userId: string): Promise<SplitUrlPreview>;
}

export function createSplitUrlService(deps: { experiments: Pick<ExperimentsService, 'get'> }): SplitUrlService {
  return {
    async preview(experimentId, userId) {
      const experiment = await deps.experiments.get(experimentId);
      if (experiment.experiment_type !== 'split_url') throw new BadRequest(NOT_SPLIT_URL);
      if (experiment.split_url_config === null) throw new BadRequest(NO_SPLIT_URL_CONFIG);
      const config = readStoredSplitUrlConfig(experiment.split_url_config);
      if (!config) throw new Conflict(STORED_CONFIG_INVALID);
      const variant = pickByAllocation(config.variants, previewBucket(userId, experiment.id));
      return { experiment_id: experiment.id, user_id: userId, variant_name: variant.name, url: variant.url, traffic_allocation: variant.traffic_allocation };
    },
  };
}

/** A core deployment serves the route (same contract) but not the feature (spec: 501 in core). */
export const splitUrlUnavailable: SplitUrlService = {
  preview: () => Promise.reject(new NotImplemented(SPLIT_URL_NOT_AVAILABLE)),
};

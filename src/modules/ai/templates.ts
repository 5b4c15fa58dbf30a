/**
 * Built-in experiment templates: the AI helper routes answer from these (and the statistics engine) when no
 * language model is configured or the model's answer is unusable.
 */
export interface TemplateVariant {
  name: string;
  is_control: boolean;
  description: string;
}

export interface TemplateMetric {
  name: string;
  event_name: string;
  metric_type: 'conversion';
  is_primary: boolean;
}

export interface ExperimentTemplate {
  id: string;
  name: string;
  category: string;
  description: string;
  experiment_type: 'a_b' | 'mv' | 'split_url' | 'bandit';
  hypothesis: string;
  variants: TemplateVariant[];
  metrics: TemplateMetric[];
  default_baseline_conversion_rate: number;
  default_mde: number;
  /** Words in a goal that point to this template. */
  tags: string[];
}

const control = (description: string): TemplateVariant => ({ name: 'control', is_control: true, description });
const treatment = (name: string, description: string): TemplateVariant => ({ name, is_control: false, description });
const primary = (name: string, event_name: string): TemplateMetric => ({ name, event_name, metric_type: 'conversion', is_primary: true });
const secondary = (name: string, event_name: string): TemplateMetric => ({ name, event_name, metric_type: 'conversion', is_primary: false });

export const GENERIC_TEMPLATE_ID = 'generic-ab';

export const TEMPLATES: readonly ExperimentTemplate[] = [
  {
    id: GENERIC_TEMPLATE_ID,
    name: 'A/B test',
    category: 'general',
    description: 'One change against the current experience, measured on one conversion.',
    experiment_type: 'a_b',
    hypothesis: 'If we make this change, more users will convert, because it removes friction from the main task.',
    variants: [control('The current experience'), treatment('treatment', 'The experience with the change')],
    metrics: [primary('Conversion', 'conversion')],
    default_baseline_conversion_rate: 0.1,
    default_mde: 0.1,
    tags: [],
  },
  {
    id: 'checkout-conversion',
    name: 'Checkout conversion',
    category: 'ecommerce',
    description: 'Simplify or reorder the checkout flow to raise completed purchases.',
    experiment_type: 'a_b',
    hypothesis: 'If we simplify checkout, more users who start it will complete a purchase, because fewer steps means fewer drop-offs.',
    variants: [control('The current checkout'), treatment('simplified_checkout', 'Checkout with fewer steps and fields')],
    metrics: [primary('Purchase', 'purchase'), secondary('Checkout started', 'checkout_started')],
    default_baseline_conversion_rate: 0.03,
    default_mde: 0.1,
    tags: ['checkout', 'purchase', 'cart', 'payment', 'order', 'buy', 'revenue', 'ecommerce'],
  },
  {
    id: 'pricing-page',
    name: 'Pricing page',
    category: 'monetisation',
    description: 'Change plan presentation, anchoring or defaults on the pricing page.',
    experiment_type: 'a_b',
    hypothesis: 'If we highlight the recommended plan, more visitors will start a subscription, because the choice becomes easier.',
    variants: [control('The current pricing page'), treatment('highlighted_plan', 'Pricing page with the recommended plan highlighted')],
    metrics: [primary('Subscription started', 'subscription_started'), secondary('Plan selected', 'plan_selected')],
    default_baseline_conversion_rate: 0.05,
    default_mde: 0.1,
    tags: ['pricing', 'price', 'plan', 'subscription', 'upgrade', 'trial', 'monetisation', 'monetization'],
  },
  {
    id: 'onboarding-activation',
    name: 'Onboarding activation',
    category: 'product',
    description: 'Change the first-run experience so more new users reach the activation moment.',
    experiment_type: 'a_b',
    hypothesis: 'If we guide new users to their first key action, more of them will activate, because they see the value sooner.',
    variants: [control('The current onboarding'), treatment('guided_onboarding', 'Onboarding with a guided first task')],
    metrics: [primary('Activated', 'activated'), secondary('Onboarding completed', 'onboarding_completed')],
    default_baseline_conversion_rate: 0.25,
    default_mde: 0.05,
    tags: ['onboarding', 'activation', 'signup', 'sign-up', 'first', 'welcome', 'tutorial', 'retention'],
  },
  {
    id: 'cta-copy',
    name: 'Call-to-action copy',
    category: 'marketing',
    description: 'Compare several wordings or colours of a call-to-action button.',
    experiment_type: 'mv',
    hypothesis: 'If the call to action states the benefit, more visitors will click it, because the value of clicking is clear.',
    variants: [
      control('The current button'),
      treatment('benefit_copy', 'Button text stating the benefit'),
      treatment('urgency_copy', 'Button text with urgency'),
    ],
    metrics: [primary('CTA clicked', 'cta_clicked'), secondary('Sign-up', 'signup')],
    default_baseline_conversion_rate: 0.08,
    default_mde: 0.1,
    tags: ['button', 'cta', 'copy', 'headline', 'text', 'wording', 'click', 'colour', 'color'],
  },
  {
    id: 'landing-page-split',
    name: 'Landing page redesign (split URL)',
    category: 'marketing',
    description: 'Send visitors to two separately built landing pages.',
    experiment_type: 'split_url',
    hypothesis: 'If visitors land on the redesigned page, more of them will sign up, because it explains the product faster.',
    variants: [control('The current landing page URL'), treatment('redesign', 'The redesigned landing page URL')],
    metrics: [primary('Sign-up', 'signup'), secondary('Bounce avoided', 'second_page_view')],
    default_baseline_conversion_rate: 0.04,
    default_mde: 0.15,
    tags: ['landing', 'redesign', 'homepage', 'page', 'url', 'split'],
  },
  {
    id: 'recommendations-bandit',
    name: 'Recommendation strategy (bandit)',
    category: 'personalisation',
    description: 'Let traffic flow to the best of several recommendation strategies while learning.',
    experiment_type: 'bandit',
    hypothesis: 'One of these recommendation strategies earns more clicks; shifting traffic to it early limits lost clicks.',
    variants: [
      control('The current strategy'),
      treatment('popular_items', 'Most popular items'),
      treatment('similar_items', 'Items similar to recently viewed ones'),
    ],
    metrics: [primary('Recommendation clicked', 'recommendation_clicked')],
    default_baseline_conversion_rate: 0.06,
    default_mde: 0.1,
    tags: ['recommendation', 'recommendations', 'personalisation', 'personalization', 'bandit', 'ranking', 'feed'],
  },
  {
    id: 'email-subject',
    name: 'Email subject line',
    category: 'lifecycle',
    description: 'Compare subject lines of a lifecycle or campaign email.',
    experiment_type: 'a_b',
    hypothesis: 'If the subject line is personal, more recipients will open the email, because it feels relevant.',
    variants: [control('The current subject line'), treatment('personal_subject', 'A personalised subject line')],
    metrics: [primary('Email opened', 'email_opened'), secondary('Email link clicked', 'email_clicked')],
    default_baseline_conversion_rate: 0.2,
    default_mde: 0.05,
    tags: ['email', 'subject', 'newsletter', 'campaign', 'open'],
  },
];

export function findTemplate(id: string): ExperimentTemplate | undefined {
  return TEMPLATES.find((t) => t.id === id);
}

/** The template whose tags appear most often in the goal; the generic A/B test when none does. */
export function matchTemplate(goal: string): ExperimentTemplate {
  const words = goal.toLowerCase().split(/[^a-z0-9-]+/).filter(Boolean);
  let best = TEMPLATES[0];
  let bestScore = 0;
  for (const template of TEMPLATES) {
    const score = words.filter((w) => template.tags.includes(w)).length;
    if (score > bestScore) {
      best = template;
      bestScore = score;
    }
  }
  return best;
}

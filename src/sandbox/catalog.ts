// Static vocabulary for generated data: event series, companies and their KPIs.

export const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'] as const;
export const MONTH_NAMES = [
  'January', 'February', 'March', 'April', 'May', 'June',
  'July', 'August', 'September', 'October', 'November', 'December',
] as const;

export interface SeriesSpec {
  series: string;
  /** The market-search thematic cluster's label. */
  theme: string;
  category: string;
  /** Title with `{month}`, `{day}`, `{year}` placeholders. */
  title: string;
  outcomes: readonly string[];
}

export const SERIES: readonly SeriesSpec[] = [
  { series: 'KXFED', theme: 'Fed rate decisions', category: 'economics', title: 'Fed rate decision in {month} {year}', outcomes: ['Cut 25bps', 'Hold', 'Hike 25bps'] },
  { series: 'KXCPI', theme: 'US inflation prints', category: 'economics', title: 'CPI year-over-year in {month} {year}', outcomes: ['Above 3.0%', 'Above 2.8%', 'Above 2.6%'] },
  { series: 'KXPAYROLLS', theme: 'US jobs reports', category: 'economics', title: 'Nonfarm payrolls for {month} {year}', outcomes: ['Above 200k', 'Above 150k', 'Above 100k'] },
  { series: 'KXGDP', theme: 'US GDP growth', category: 'economics', title: 'GDP growth reported {month} {day}, {year}', outcomes: ['Above 2.5%', 'Above 2.0%', 'Above 1.5%'] },
  { series: 'KXSENATE', theme: 'Senate funding votes', category: 'politics', title: 'Senate vote on the {month} funding bill', outcomes: ['Passes', 'Fails'] },
  { series: 'KXGOVSHUT', theme: 'Government shutdowns', category: 'politics', title: 'Government shutdown by {month} {day}, {year}', outcomes: ['Yes'] },
  { series: 'KXAPPROVAL', theme: 'Presidential approval', category: 'politics', title: 'Presidential approval on {month} {day}', outcomes: ['Above 45%', 'Above 42%', 'Above 40%'] },
  { series: 'KXMAYOR', theme: 'Mayoral races', category: 'politics', title: 'Mayoral runoff winner, {month} {year}', outcomes: ['Candidate A', 'Candidate B', 'Candidate C'] },
  { series: 'KXBTC', theme: 'Bitcoin price levels', category: 'crypto', title: 'Bitcoin price on {month} {day}, {year}', outcomes: ['Above $120k', 'Above $110k', 'Above $100k', 'Above $90k'] },
  { series: 'KXETH', theme: 'Ethereum price levels', category: 'crypto', title: 'Ethereum price on {month} {day}, {year}', outcomes: ['Above $5000', 'Above $4500', 'Above $4000'] },
  { series: 'KXSOL', theme: 'Solana price levels', category: 'crypto', title: 'Solana price on {month} {day}, {year}', outcomes: ['Above $250', 'Above $200'] },
  { series: 'KXNBAGAME', theme: 'NBA games', category: 'sports', title: 'NBA: Lakers vs Celtics on {month} {day}', outcomes: ['Lakers', 'Celtics'] },
  { series: 'KXNFLGAME', theme: 'NFL games', category: 'sports', title: 'NFL: Chiefs vs Bills on {month} {day}', outcomes: ['Chiefs', 'Bills'] },
  { series: 'KXEPL', theme: 'Premier League table', category: 'sports', title: 'Premier League leader on {month} {day}, {year}', outcomes: ['Arsenal', 'Liverpool', 'Man City'] },
  { series: 'KXHIGHNY', theme: 'NYC temperatures', category: 'climate', title: 'Highest temperature in NYC on {month} {day}', outcomes: ['Above 50F', 'Above 45F', 'Above 40F'] },
  { series: 'KXHURRICANE', theme: 'Hurricane season', category: 'climate', title: 'Named storms by {month} {year}', outcomes: ['Above 15', 'Above 12'] },
  { series: 'KXAIMODEL', theme: 'AI model leaderboard', category: 'technology', title: 'Top AI model on the leaderboard, {month} {day}', outcomes: ['Lab A', 'Lab B', 'Lab C'] },
  { series: 'KXIPO', theme: 'Tech IPOs', category: 'technology', title: 'Tech IPO priced by {month} {day}, {year}', outcomes: ['Yes'] },
  { series: 'KXOSCARS', theme: 'Awards season', category: 'entertainment', title: 'Best Picture nominee announced {month} {year}', outcomes: ['Film A', 'Film B', 'Film C'] },
  { series: 'KXBOXOFFICE', theme: 'Box office openings', category: 'entertainment', title: 'Opening weekend box office, {month} {day}', outcomes: ['Above $150M', 'Above $100M'] },
];

export const TAKEAWAYS = [
  'The model sees the market underpricing {outcome}.',
  'Recent evidence moved the model away from the market on {outcome}.',
  'Market and model broadly agree; little edge on {outcome}.',
  'Thin liquidity keeps {outcome} priced conservatively.',
  'Fresh reporting points toward {outcome}, the market has not caught up.',
] as const;

export interface KpiSpec {
  kpi: string;
  title: string;
  unit: string;
  type: string;
  /** Typical reported value. */
  base: number;
  /** Number formatting of a value, e.g. '301.6M'. */
  scale: 'M' | 'K' | 'B' | '%' | '';
}

export interface CompanySpec {
  name: string;
  ticker: string;
  exchange: string;
  sector: string;
  industry: string;
  kpis: readonly KpiSpec[];
}

export const COMPANIES: readonly CompanySpec[] = [
  { name: 'Netflix', ticker: 'NFLX', exchange: 'NASDAQ', sector: 'Communication Services', industry: 'Entertainment',
    kpis: [{ kpi: 'paid-memberships', title: 'Paid memberships', unit: 'subscribers', type: 'subscribers', base: 310e6, scale: 'M' }] },
  { name: 'Tesla', ticker: 'TSLA', exchange: 'NASDAQ', sector: 'Consumer Discretionary', industry: 'Automobiles',
    kpis: [{ kpi: 'deliveries', title: 'Vehicle deliveries', unit: 'vehicles', type: 'deliveries', base: 470e3, scale: 'K' }] },
  { name: 'Uber', ticker: 'UBER', exchange: 'NYSE', sector: 'Industrials', industry: 'Ground Transportation',
    kpis: [{ kpi: 'trips', title: 'Trips', unit: 'trips', type: 'transactions', base: 3.3e9, scale: 'B' },
      { kpi: 'mapcs', title: 'Monthly active platform consumers', unit: 'users', type: 'mau', base: 180e6, scale: 'M' }] },
  { name: 'Spotify', ticker: 'SPOT', exchange: 'NYSE', sector: 'Communication Services', industry: 'Entertainment',
    kpis: [{ kpi: 'mau', title: 'Monthly active users', unit: 'users', type: 'mau', base: 720e6, scale: 'M' },
      { kpi: 'premium-subscribers', title: 'Premium subscribers', unit: 'subscribers', type: 'subscribers', base: 280e6, scale: 'M' }] },
  { name: 'Meta Platforms', ticker: 'META', exchange: 'NASDAQ', sector: 'Communication Services', industry: 'Interactive Media',
    kpis: [{ kpi: 'dap', title: 'Daily active people', unit: 'users', type: 'dau', base: 3.5e9, scale: 'B' }] },
  { name: 'Airbnb', ticker: 'ABNB', exchange: 'NASDAQ', sector: 'Consumer Discretionary', industry: 'Hotels & Travel',
    kpis: [{ kpi: 'nights-booked', title: 'Nights and experiences booked', unit: 'nights', type: 'orders', base: 130e6, scale: 'M' }] },
  { name: 'Robinhood', ticker: 'HOOD', exchange: 'NASDAQ', sector: 'Financials', industry: 'Capital Markets',
    kpis: [{ kpi: 'funded-customers', title: 'Funded customers', unit: 'accounts', type: 'accounts', base: 26e6, scale: 'M' }] },
  { name: 'Delta Air Lines', ticker: 'DAL', exchange: 'NYSE', sector: 'Industrials', industry: 'Airlines',
    kpis: [{ kpi: 'passengers', title: 'Passengers carried', unit: 'passengers', type: 'passengers', base: 52e6, scale: 'M' }] },
  { name: 'Costco', ticker: 'COST', exchange: 'NASDAQ', sector: 'Consumer Staples', industry: 'Retail',
    kpis: [{ kpi: 'paid-members', title: 'Paid members', unit: 'members', type: 'members', base: 80e6, scale: 'M' }] },
  { name: 'Rivian', ticker: 'RIVN', exchange: 'NASDAQ', sector: 'Consumer Discretionary', industry: 'Automobiles',
    kpis: [{ kpi: 'deliveries', title: 'Vehicle deliveries', unit: 'vehicles', type: 'deliveries', base: 13e3, scale: 'K' }] },
  { name: 'Shopify', ticker: 'SHOP', exchange: 'NASDAQ', sector: 'Information Technology', industry: 'Software',
    kpis: [{ kpi: 'gross-margin', title: 'Gross margin', unit: '%', type: 'margin', base: 48.5, scale: '%' }] },
  { name: 'DoorDash', ticker: 'DASH', exchange: 'NASDAQ', sector: 'Consumer Discretionary', industry: 'Internet Retail',
    kpis: [{ kpi: 'total-orders', title: 'Total orders', unit: 'orders', type: 'orders', base: 760e6, scale: 'M' }] },
];

export function formatKpi(value: number, scale: KpiSpec['scale']): string {
  switch (scale) {
    case 'B': return `${(value / 1e9).toFixed(2)}B`;
    case 'M': return `${(value / 1e6).toFixed(1)}M`;
    case 'K': return `${(value / 1e3).toFixed(1)}K`;
    case '%': return `${value.toFixed(1)}%`;
    default: return value.toFixed(0);
  }
}

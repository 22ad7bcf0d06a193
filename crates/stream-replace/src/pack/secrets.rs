//! Vendor secrets: keys and tokens whose provider documents a prefix and a
//! length. Each pattern is written from the provider's description of its
//! format; where a provider documents no prefix (a bare 32-hex key), the
//! credential rules catch the value by its label instead.

use super::rule::{PackAction, PackRule};
use crate::validate;

/// A masking vendor rule with no validator and no template.
const fn vendor(
    id: &'static str,
    pattern: &'static str,
    mask: &'static str,
    what: &'static str,
    misses: &'static str,
) -> PackRule {
    PackRule {
        id,
        pattern,
        mask,
        action: PackAction::Mask,
        validator: None,
        template: None,
        what,
        misses,
    }
}

/// Said of every prefixed rule: what a prefix and a length cannot tell.
macro_rules! prefixed {
    ($extra:literal) => {
        concat!(
            "A key cut short, re-wrapped over lines or glued to a preceding letter, \
             digit or `_`. ",
            $extra
        )
    };
}

// Clouds.

pub(super) const AWS_KEY_ID_OTHER: PackRule = vendor(
    "aws_sts_key_id",
    r"(?-u:\b)(?:ABIA|ACCA)[A-Z0-9]{16}(?-u:\b)",
    "[AWS_KEY]",
    "AWS key ids of STS service bearer tokens (`ABIA`) and context-specific \
     credentials (`ACCA`): the prefix and 16 upper-case letters or digits. \
     `AKIA`/`ASIA` ids are `aws_access_key_id`.",
    prefixed!("The secret that goes with the id has no marker: caught by its label only."),
);

pub(super) const GCP_OAUTH_SECRET: PackRule = vendor(
    "google_oauth_client_secret",
    r"(?-u:\b)GOCSPX-[A-Za-z0-9_-]{28}",
    "[GOOGLE_SECRET]",
    "Google OAuth client secrets: `GOCSPX-` and 28 of `[A-Za-z0-9_-]`.",
    prefixed!("Client secrets created before 2021 (24 characters, no prefix)."),
);

pub(super) const GCP_ACCESS_TOKEN: PackRule = vendor(
    "google_oauth_access_token",
    r"(?-u:\b)ya29\.[A-Za-z0-9_-]{20,}",
    "[GOOGLE_TOKEN]",
    "Google OAuth 2.0 access tokens: `ya29.` and 20 or more of `[A-Za-z0-9_-]`.",
    prefixed!("Refresh tokens (`1//`, too short a marker to tell from paths)."),
);

pub(super) const AZURE_STORAGE_KEY: PackRule = vendor(
    "azure_storage_key",
    r"(?-u:\b)AccountKey=[A-Za-z0-9+/]{86}==",
    "[AZURE_KEY]",
    "Azure Storage account keys inside connection strings: `AccountKey=` and \
     88 characters of base64 (64 bytes) ending in `==`.",
    "A key outside a connection string (no label: 88 base64 characters look like \
     any other), and shared access signatures (`sig=`).",
);

pub(super) const DIGITALOCEAN_TOKEN: PackRule = vendor(
    "digitalocean_token",
    r"(?-u:\b)do[opr]_v1_[a-f0-9]{64}(?-u:\b)",
    "[DIGITALOCEAN_TOKEN]",
    "DigitalOcean personal access (`dop_v1_`), OAuth (`doo_v1_`) and refresh \
     (`dor_v1_`) tokens: the prefix and 64 lower-case hex digits.",
    prefixed!("Spaces access keys (no prefix)."),
);

pub(super) const ALIBABA_KEY_ID: PackRule = vendor(
    "alibaba_access_key_id",
    r"(?-u:\b)LTAI[A-Za-z0-9]{12,20}(?-u:\b)",
    "[ALIBABA_KEY]",
    "Alibaba Cloud AccessKey ids: `LTAI` and 12 to 20 letters or digits.",
    prefixed!("The AccessKey secret (30 characters, no prefix)."),
);

pub(super) const DATABRICKS_TOKEN: PackRule = vendor(
    "databricks_token",
    r"(?-u:\b)dapi[a-f0-9]{32}(?:-[0-9]+)?(?-u:\b)",
    "[DATABRICKS_TOKEN]",
    "Databricks personal access tokens: `dapi`, 32 lower-case hex digits and an \
     optional `-N` suffix.",
    prefixed!("OAuth secrets of service principals (`dose`)."),
);

pub(super) const VAULT_TOKEN: PackRule = vendor(
    "hashicorp_vault_token",
    r"(?-u:\b)hv[sbr]\.[A-Za-z0-9_-]{24,}",
    "[VAULT_TOKEN]",
    "HashiCorp Vault service (`hvs.`), batch (`hvb.`) and recovery (`hvr.`) \
     tokens: the prefix and 24 or more of `[A-Za-z0-9_-]`.",
    prefixed!("Tokens from Vault before 1.10 (`s.`, `b.`: too short a marker)."),
);

// The token id is matched as a run of any length and counted by the
// validator: a `\b` and a counted `{14}` keep a match attempt alive
// through every word of prose beside the one `email` starts inside it
// (BENCHMARKS.md, "Packs", measures the cost). A run without `\b` started
// at any byte of a word reaches the state of the run started at its first
// byte, so the two attempts merge; a run longer than 14 is rejected at
// each start until its last 14 remain, which only happens before
// `.atlasv1.`.
pub(super) const TERRAFORM_TOKEN: PackRule = PackRule {
    id: "terraform_cloud_token",
    pattern: r"[A-Za-z0-9]+\.atlasv1\.[A-Za-z0-9_=-]{60,70}",
    mask: "[TERRAFORM_TOKEN]",
    action: PackAction::Mask,
    validator: Some(validate::terraform_token_id),
    template: None,
    what: "HCP Terraform (Terraform Cloud) API tokens: 14 letters or digits, \
           `.atlasv1.`, and 60 to 70 of `[A-Za-z0-9_=-]`. Where more letters or \
           digits stand before `.atlasv1.` (the id glued to a word), the last 14 \
           and what follows are masked.",
    misses: "A token cut short or re-wrapped over lines.",
};

pub(super) const DOPPLER_TOKEN: PackRule = vendor(
    "doppler_token",
    r"(?-u:\b)dp\.(?:pt|st|ct|sa|scim|audit)\.[A-Za-z0-9]{40,44}(?-u:\b)",
    "[DOPPLER_TOKEN]",
    "Doppler personal, service, CLI, service-account, SCIM and audit tokens: \
     `dp.pt.`, `dp.st.`, ... and 40 to 44 letters or digits.",
    prefixed!(""),
);

pub(super) const PULUMI_TOKEN: PackRule = vendor(
    "pulumi_token",
    r"(?-u:\b)pul-[a-f0-9]{40}(?-u:\b)",
    "[PULUMI_TOKEN]",
    "Pulumi access tokens: `pul-` and 40 lower-case hex digits.",
    prefixed!(""),
);

pub(super) const GRAFANA_TOKEN: PackRule = vendor(
    "grafana_token",
    r"(?-u:\b)(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,}={0,2})",
    "[GRAFANA_TOKEN]",
    "Grafana service-account tokens (`glsa_`, 32 letters or digits, `_`, 8 hex \
     digits) and Grafana Cloud access-policy tokens (`glc_` and 32 or more \
     base64 characters).",
    prefixed!("Legacy API keys (`eyJrIjoi…`, base64 JSON with no prefix)."),
);

pub(super) const NEW_RELIC_KEY: PackRule = vendor(
    "new_relic_key",
    r"(?-u:\b)NR(?:AK|II|JS|AA)-[A-Za-z0-9]{27,32}(?-u:\b)",
    "[NEW_RELIC_KEY]",
    "New Relic user (`NRAK-`), insights insert (`NRII-`), browser (`NRJS-`) and \
     admin (`NRAA-`) keys: the prefix and 27 to 32 letters or digits.",
    prefixed!("License keys (40 hex digits ending in `NRAL`, no prefix)."),
);

pub(super) const SENTRY_TOKEN: PackRule = vendor(
    "sentry_token",
    r"(?-u:\b)(?:sntrys_eyJ[A-Za-z0-9+/=_-]{40,}|sntryu_[a-f0-9]{64}(?-u:\b))",
    "[SENTRY_TOKEN]",
    "Sentry organization auth tokens (`sntrys_` and base64 JSON) and user auth \
     tokens (`sntryu_` and 64 lower-case hex digits).",
    prefixed!(
        "DSNs (their key is public by design) and tokens from before 2023 (64 hex, no prefix)."
    ),
);

// Code hosts and package registries.

pub(super) const GITLAB_TOKEN: PackRule = vendor(
    "gitlab_token",
    r"(?-u:\b)(?:glpat|gldt|glrt|glcbt|glft|glimt|gloas|glagent|glsoat|glffct|glwt)-[A-Za-z0-9_.-]{20,}",
    "[GITLAB_TOKEN]",
    "GitLab personal/project/group access (`glpat-`), deploy (`gldt-`), runner \
     (`glrt-`), CI job (`glcbt-`), feed (`glft-`), incoming mail (`glimt-`), \
     OAuth application secret (`gloas-`), agent (`glagent-`), SCIM (`glsoat-`), \
     feature-flag client (`glffct-`) and workspace (`glwt-`) tokens: the prefix \
     and 20 or more of `[A-Za-z0-9_.-]`.",
    prefixed!(
        "Pipeline trigger tokens (`glptt-`) and runner registration tokens (`GR1348941`) are `gitlab_trigger_token`."
    ),
);

pub(super) const GITLAB_TRIGGER_TOKEN: PackRule = vendor(
    "gitlab_trigger_token",
    r"(?-u:\b)(?:glptt-[a-f0-9]{40}|GR1348941[A-Za-z0-9_-]{20})(?-u:\b)",
    "[GITLAB_TOKEN]",
    "GitLab pipeline trigger tokens (`glptt-` and 40 hex digits) and runner \
     registration tokens (`GR1348941` and 20 of `[A-Za-z0-9_-]`).",
    prefixed!(""),
);

pub(super) const BITBUCKET_APP_PASSWORD: PackRule = vendor(
    "atlassian_token",
    r"(?-u:\b)(?:ATBB[A-Za-z0-9]{32}|ATATT3[A-Za-z0-9_=-]{180,})",
    "[ATLASSIAN_TOKEN]",
    "Bitbucket app passwords (`ATBB` and 32 letters or digits) and Atlassian \
     API tokens (`ATATT3` and 180 or more of `[A-Za-z0-9_=-]`).",
    prefixed!("Atlassian tokens created before 2023 (24 characters, no prefix)."),
);

pub(super) const NPM_TOKEN: PackRule = vendor(
    "npm_token",
    r"(?-u:\b)npm_[A-Za-z0-9]{36}(?-u:\b)",
    "[NPM_TOKEN]",
    "npm access tokens: `npm_` and 36 letters or digits.",
    prefixed!("Legacy tokens (a UUID, no prefix)."),
);

pub(super) const PYPI_TOKEN: PackRule = vendor(
    "pypi_token",
    r"(?-u:\b)pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}",
    "[PYPI_TOKEN]",
    "PyPI API tokens: `pypi-` and a macaroon whose base64 starts with \
     `AgEIcHlwaS5vcmc` (`pypi.org`), 50 or more characters after it.",
    prefixed!("Tokens of TestPyPI (`AgENdGVzdC5weXBp…`) and other indexes."),
);

pub(super) const RUBYGEMS_KEY: PackRule = vendor(
    "rubygems_key",
    r"(?-u:\b)rubygems_[a-f0-9]{48}(?-u:\b)",
    "[RUBYGEMS_KEY]",
    "RubyGems API keys: `rubygems_` and 48 lower-case hex digits.",
    prefixed!(""),
);

pub(super) const NUGET_KEY: PackRule = vendor(
    "nuget_key",
    r"(?-u:\b)oy2[a-z0-9]{43}(?-u:\b)",
    "[NUGET_KEY]",
    "NuGet.org API keys: `oy2` and 43 lower-case letters or digits.",
    prefixed!(""),
);

pub(super) const DOCKER_TOKEN: PackRule = vendor(
    "docker_hub_token",
    r"(?-u:\b)dckr_(?:pat|oat)_[A-Za-z0-9_-]{27,}",
    "[DOCKER_TOKEN]",
    "Docker Hub personal (`dckr_pat_`) and organization (`dckr_oat_`) access \
     tokens: the prefix and 27 or more of `[A-Za-z0-9_-]`.",
    prefixed!("Docker Hub passwords and registry tokens of other hosts."),
);

pub(super) const POSTMAN_KEY: PackRule = vendor(
    "postman_key",
    r"(?-u:\b)PMAK-[a-f0-9]{24}-[a-f0-9]{34}(?-u:\b)",
    "[POSTMAN_KEY]",
    "Postman API keys: `PMAK-`, 24 hex digits, `-`, 34 hex digits.",
    prefixed!(""),
);

pub(super) const SHOPIFY_TOKEN: PackRule = vendor(
    "shopify_token",
    r"(?-u:\b)shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}(?-u:\b)",
    "[SHOPIFY_TOKEN]",
    "Shopify admin API (`shpat_`), custom app (`shpca_`), private app \
     (`shppa_`) tokens and shared secrets (`shpss_`): the prefix and 32 hex digits.",
    prefixed!(""),
);

pub(super) const LINEAR_KEY: PackRule = vendor(
    "linear_key",
    r"(?-u:\b)lin_(?:api|oauth)_[A-Za-z0-9]{40}(?-u:\b)",
    "[LINEAR_KEY]",
    "Linear API keys (`lin_api_`) and OAuth tokens (`lin_oauth_`): the prefix \
     and 40 letters or digits.",
    prefixed!(""),
);

pub(super) const NOTION_TOKEN: PackRule = vendor(
    "notion_token",
    r"(?-u:\b)(?:ntn_[A-Za-z0-9]{40,50}|secret_[A-Za-z0-9]{43})(?-u:\b)",
    "[NOTION_TOKEN]",
    "Notion integration tokens: `ntn_` and 40 to 50 letters or digits, and the \
     older `secret_` and 43 letters or digits.",
    prefixed!(
        "Any other vendor's `secret_` token of exactly 43 letters or digits is caught as Notion's."
    ),
);

pub(super) const FIGMA_TOKEN: PackRule = vendor(
    "figma_token",
    r"(?-u:\b)fig[dou]_[A-Za-z0-9_-]{40,}",
    "[FIGMA_TOKEN]",
    "Figma personal access (`figd_`), OAuth access (`figo_`) and refresh \
     (`figu_`) tokens: the prefix and 40 or more of `[A-Za-z0-9_-]`.",
    prefixed!(""),
);

pub(super) const AIRTABLE_TOKEN: PackRule = vendor(
    "airtable_token",
    r"(?-u:\b)pat[A-Za-z0-9]{14}\.[a-f0-9]{64}(?-u:\b)",
    "[AIRTABLE_TOKEN]",
    "Airtable personal access tokens: `pat`, 14 letters or digits, `.`, 64 hex digits.",
    prefixed!("Legacy API keys (`key` and 14 characters: too short a marker)."),
);

// Payments.

pub(super) const STRIPE_WEBHOOK_SECRET: PackRule = vendor(
    "stripe_webhook_secret",
    r"(?-u:\b)whsec_[A-Za-z0-9]{32,}",
    "[STRIPE_KEY]",
    "Stripe webhook signing secrets: `whsec_` and 32 or more letters or digits. \
     Live secret and restricted keys are `stripe_key`.",
    prefixed!("Test-mode secret keys (`sk_test_`), harmless by design."),
);

pub(super) const SQUARE_TOKEN: PackRule = vendor(
    "square_token",
    r"(?-u:\b)(?:sq0atp-[A-Za-z0-9_-]{22}|sq0csp-[A-Za-z0-9_-]{43})",
    "[SQUARE_TOKEN]",
    "Square OAuth access tokens (`sq0atp-` and 22 of `[A-Za-z0-9_-]`) and \
     application secrets (`sq0csp-` and 43).",
    prefixed!(
        "Production access tokens (`EAAA…`). A longer run of the same characters keeps its tail."
    ),
);

pub(super) const BRAINTREE_TOKEN: PackRule = vendor(
    "braintree_token",
    r"(?-u:\b)access_token\$(?:production|sandbox)\$[a-z0-9]{16}\$[a-f0-9]{32}(?-u:\b)",
    "[BRAINTREE_TOKEN]",
    "PayPal Braintree access tokens: `access_token$production$`, 16 letters or \
     digits, `$`, 32 hex digits (and the same for `sandbox`).",
    prefixed!("Braintree private keys (32 hex digits, no prefix)."),
);

pub(super) const RAZORPAY_KEY: PackRule = vendor(
    "razorpay_key",
    r"(?-u:\b)rzp_live_[A-Za-z0-9]{14}(?-u:\b)",
    "[RAZORPAY_KEY]",
    "Razorpay live key ids: `rzp_live_` and 14 letters or digits.",
    prefixed!("The key secret that goes with it (24 characters, no prefix)."),
);

pub(super) const FLUTTERWAVE_KEY: PackRule = vendor(
    "flutterwave_key",
    r"(?-u:\b)FLW(?:SECK|PUBK)-[a-f0-9]{32}-X(?-u:\b)",
    "[FLUTTERWAVE_KEY]",
    "Flutterwave secret (`FLWSECK-`) and public (`FLWPUBK-`) keys: the prefix, \
     32 hex digits and `-X`.",
    prefixed!("Test keys (`FLWSECK_TEST-`)."),
);

pub(super) const PLAID_TOKEN: PackRule = vendor(
    "plaid_token",
    r"(?-u:\b)access-(?:sandbox|development|production)-[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}(?-u:\b)",
    "[PLAID_TOKEN]",
    "Plaid access tokens: `access-`, the environment, `-` and a UUID.",
    prefixed!("The Plaid secret (30 hex digits, no prefix)."),
);

// Messaging and mail.

pub(super) const SLACK_APP_TOKEN: PackRule = vendor(
    "slack_app_token",
    r"(?-u:\b)xapp-[0-9]-[A-Z0-9]{9,}-[0-9]{10,}-[a-f0-9]{32,}(?-u:\b)",
    "[SLACK_TOKEN]",
    "Slack app-level tokens: `xapp-`, a digit, the app id, a number and 32 or \
     more hex digits.",
    prefixed!(""),
);

pub(super) const SLACK_WEBHOOK: PackRule = vendor(
    "slack_webhook",
    r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]{20,}",
    "[SLACK_WEBHOOK]",
    "Slack incoming-webhook, workflow and trigger URLs: \
     `https://hooks.slack.com/services/…` with 20 or more characters of path.",
    "URLs written with `http:` or another host spelling, and a path cut short.",
);

pub(super) const DISCORD_WEBHOOK: PackRule = vendor(
    "discord_webhook",
    r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]{17,20}/[A-Za-z0-9_-]{60,70}",
    "[DISCORD_WEBHOOK]",
    "Discord webhook URLs: `https://discord.com/api/webhooks/`, the webhook id \
     (17 to 20 digits), `/` and the 60 to 70 character token.",
    "URLs with a versioned path (`/api/v10/webhooks/`).",
);

pub(super) const DISCORD_BOT_TOKEN: PackRule = vendor(
    "discord_bot_token",
    r"(?-u:\b)[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}",
    "[DISCORD_TOKEN]",
    "Discord bot tokens: the base64 bot id (starting `M`, `N` or `O`), `.`, a \
     6-character timestamp, `.`, and 27 to 40 characters of HMAC.",
    prefixed!("Tokens of bots whose id encodes to another first letter."),
);

pub(super) const TELEGRAM_BOT_TOKEN: PackRule = vendor(
    "telegram_bot_token",
    r"(?-u:\b)[0-9]{8,10}:AA[A-Za-z0-9_-]{33}",
    "[TELEGRAM_TOKEN]",
    "Telegram bot tokens: the bot id (8 to 10 digits), `:AA` and 33 of \
     `[A-Za-z0-9_-]`.",
    prefixed!("A longer run of the same characters keeps its tail."),
);

pub(super) const TWILIO_KEY: PackRule = vendor(
    "twilio_api_key",
    r"(?-u:\b)SK[a-f0-9]{32}(?-u:\b)",
    "[TWILIO_KEY]",
    "Twilio API key SIDs: `SK` and 32 lower-case hex digits.",
    prefixed!("The API key secret and the account auth token (32 characters, no prefix)."),
);

pub(super) const SENDGRID_KEY: PackRule = vendor(
    "sendgrid_key",
    r"(?-u:\b)SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}",
    "[SENDGRID_KEY]",
    "Twilio SendGrid API keys: `SG.`, 22 characters, `.`, 43 characters, all \
     from `[A-Za-z0-9_-]`.",
    prefixed!("A longer run of the same characters keeps its tail."),
);

pub(super) const MAILGUN_KEY: PackRule = vendor(
    "mailgun_key",
    r"(?-u:\b)key-[a-f0-9]{32}(?-u:\b)",
    "[MAILGUN_KEY]",
    "Mailgun private API keys: `key-` and 32 lower-case hex digits.",
    prefixed!(
        "Keys created since 2023 (no prefix); any vendor's `key-` and 32 hex digits is caught."
    ),
);

pub(super) const MAILCHIMP_KEY: PackRule = vendor(
    "mailchimp_key",
    r"(?-u:\b)[a-f0-9]{32}-us[0-9]{1,2}(?-u:\b)",
    "[MAILCHIMP_KEY]",
    "Mailchimp API keys: 32 lower-case hex digits, `-us` and the data center number.",
    prefixed!(""),
);

// AI providers.

pub(super) const OPENROUTER_KEY: PackRule = vendor(
    "openrouter_key",
    r"(?-u:\b)sk-or-v1-[a-f0-9]{64}(?-u:\b)",
    "[OPENROUTER_KEY]",
    "OpenRouter API keys: `sk-or-v1-` and 64 lower-case hex digits.",
    prefixed!(""),
);

pub(super) const HUGGINGFACE_TOKEN: PackRule = vendor(
    "huggingface_token",
    r"(?-u:\b)hf_[A-Za-z]{34}(?-u:\b)",
    "[HUGGINGFACE_TOKEN]",
    "Hugging Face user access tokens: `hf_` and 34 letters.",
    prefixed!("Organization API tokens (`api_org_`)."),
);

pub(super) const GROQ_KEY: PackRule = vendor(
    "groq_key",
    r"(?-u:\b)gsk_[A-Za-z0-9]{52}(?-u:\b)",
    "[GROQ_KEY]",
    "Groq API keys: `gsk_` and 52 letters or digits.",
    prefixed!(""),
);

pub(super) const REPLICATE_TOKEN: PackRule = vendor(
    "replicate_token",
    r"(?-u:\b)r8_[A-Za-z0-9]{37}(?-u:\b)",
    "[REPLICATE_TOKEN]",
    "Replicate API tokens: `r8_` and 37 letters or digits.",
    prefixed!(""),
);

pub(super) const PERPLEXITY_KEY: PackRule = vendor(
    "perplexity_key",
    r"(?-u:\b)pplx-[A-Za-z0-9]{48}(?-u:\b)",
    "[PERPLEXITY_KEY]",
    "Perplexity API keys: `pplx-` and 48 letters or digits.",
    prefixed!(""),
);

pub(super) const XAI_KEY: PackRule = vendor(
    "xai_key",
    r"(?-u:\b)xai-[A-Za-z0-9]{80}(?-u:\b)",
    "[XAI_KEY]",
    "xAI API keys: `xai-` and 80 letters or digits.",
    prefixed!(""),
);

pub(super) const LANGSMITH_KEY: PackRule = vendor(
    "langsmith_key",
    r"(?-u:\b)lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}(?-u:\b)",
    "[LANGSMITH_KEY]",
    "LangSmith personal (`lsv2_pt_`) and service (`lsv2_sk_`) keys: the prefix, \
     32 hex digits, `_`, 10 hex digits.",
    prefixed!("Keys from before 2024 (`ls__`)."),
);

pub(super) const TAVILY_KEY: PackRule = vendor(
    "tavily_key",
    r"(?-u:\b)tvly-(?:dev-|prod-)?[A-Za-z0-9]{32}(?-u:\b)",
    "[TAVILY_KEY]",
    "Tavily API keys: `tvly-`, an optional `dev-` or `prod-`, and 32 letters or digits.",
    prefixed!(""),
);

pub(super) const PINECONE_KEY: PackRule = vendor(
    "pinecone_key",
    r"(?-u:\b)pcsk_[A-Za-z0-9]{5,7}_[A-Za-z0-9]{60,70}(?-u:\b)",
    "[PINECONE_KEY]",
    "Pinecone API keys: `pcsk_`, a short key id, `_` and 60 to 70 letters or digits.",
    prefixed!("Keys from before 2024 (a UUID, no prefix)."),
);

// Databases and data platforms.

pub(super) const PLANETSCALE_TOKEN: PackRule = vendor(
    "planetscale_token",
    r"(?-u:\b)pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{32,64}",
    "[PLANETSCALE_TOKEN]",
    "PlanetScale service tokens (`pscale_tkn_`), database passwords \
     (`pscale_pw_`) and OAuth tokens (`pscale_oauth_`): the prefix and 32 to 64 \
     of `[A-Za-z0-9_.-]`.",
    prefixed!(""),
);

pub(super) const SUPABASE_KEY: PackRule = vendor(
    "supabase_key",
    r"(?-u:\b)(?:sbp_[a-f0-9]{40}(?-u:\b)|sb_secret_[A-Za-z0-9_-]{30,})",
    "[SUPABASE_KEY]",
    "Supabase personal access tokens (`sbp_` and 40 hex digits) and secret API \
     keys (`sb_secret_` and 30 or more of `[A-Za-z0-9_-]`).",
    prefixed!("The legacy `service_role` key, a JWT (caught by `jwt`)."),
);

// Other services and key formats.

pub(super) const AGE_SECRET_KEY: PackRule = vendor(
    "age_secret_key",
    r"(?-u:\b)AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}(?-u:\b)",
    "[AGE_KEY]",
    "age encryption secret keys: `AGE-SECRET-KEY-1` and 58 Bech32 characters.",
    prefixed!("Plugin identities (`AGE-PLUGIN-`)."),
);

pub(super) const ONEPASSWORD_TOKEN: PackRule = vendor(
    "onepassword_token",
    r"(?-u:\b)ops_eyJ[A-Za-z0-9+/_-]{100,}={0,2}",
    "[1PASSWORD_TOKEN]",
    "1Password service-account tokens: `ops_` and base64 JSON (100 or more characters).",
    prefixed!("Connect server tokens (a JWT, caught by `jwt`)."),
);

pub(super) const MAPBOX_SECRET_TOKEN: PackRule = vendor(
    "mapbox_secret_token",
    r"(?-u:\b)sk\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}",
    "[MAPBOX_TOKEN]",
    "Mapbox secret access tokens: `sk.eyJ`, base64url JSON, `.`, and 20 or more characters.",
    prefixed!("Public tokens (`pk.`, public by design)."),
);

pub(super) const FACEBOOK_TOKEN: PackRule = vendor(
    "facebook_access_token",
    r"(?-u:\b)EAA[A-Za-z0-9]{90,}",
    "[FACEBOOK_TOKEN]",
    "Meta (Facebook, Instagram, WhatsApp Business) Graph API access tokens: \
     `EAA` and 90 or more letters or digits.",
    prefixed!(
        "App secrets (32 hex digits, no prefix). Square production tokens (`EAAA…`) of that length are caught too."
    ),
);

pub(super) const SHIPPO_TOKEN: PackRule = vendor(
    "shippo_token",
    r"(?-u:\b)shippo_live_[a-f0-9]{40}(?-u:\b)",
    "[SHIPPO_TOKEN]",
    "Shippo live API tokens: `shippo_live_` and 40 hex digits.",
    prefixed!("Test tokens (`shippo_test_`)."),
);

pub(super) const EASYPOST_KEY: PackRule = vendor(
    "easypost_key",
    r"(?-u:\b)EZ[AT]K[A-Za-z0-9]{54}(?-u:\b)",
    "[EASYPOST_KEY]",
    "EasyPost production (`EZAK`) and test (`EZTK`) API keys: the prefix and 54 \
     letters or digits.",
    prefixed!(""),
);

pub(super) const DROPBOX_TOKEN: PackRule = vendor(
    "dropbox_token",
    r"(?-u:\b)sl\.[A-Za-z0-9_-]{130,}",
    "[DROPBOX_TOKEN]",
    "Dropbox short-lived access tokens: `sl.` and 130 or more of `[A-Za-z0-9_-]`.",
    prefixed!("Long-lived tokens from before 2021 (64 characters, no prefix)."),
);

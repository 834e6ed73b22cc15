from vpnbench.campaign.plan import PlannedCell, TechniqueBlock, expand
from vpnbench.campaign.spec import REHEARSAL_SECONDS, Campaign, campaign_from_dict, load_campaign, rehearsal

__all__ = ["REHEARSAL_SECONDS", "Campaign", "PlannedCell", "TechniqueBlock", "campaign_from_dict", "expand", "load_campaign", "rehearsal"]

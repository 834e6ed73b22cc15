from vpnbench.campaign.plan import Cell, TechniqueBlock, expand
from vpnbench.campaign.spec import Campaign, campaign_from_dict, load_campaign

__all__ = ["Campaign", "Cell", "TechniqueBlock", "campaign_from_dict", "expand", "load_campaign"]

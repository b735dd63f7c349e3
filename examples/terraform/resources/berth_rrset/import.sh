# An RRset is imported as zone/name/type, the zone by name or id, "@" the apex.
tofu import berth_rrset.www example.com/www/CNAME
tofu import berth_rrset.mx example.com/@/MX

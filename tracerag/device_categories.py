"""SmartThings' device categories (the `components[].categories[].name` values) as the project names them.

A home file may say "SmartLock" or "Shade" where the project says "Lock" or "Blind": the reader turns an
alias into the project's name, so the safety rules, category gating and the LM's ``type_hint`` all meet
the same word. No imports: the home reader and the signatures both stand on it.
"""

from __future__ import annotations

import re

DEVICE_CATEGORIES: tuple[str, ...] = (
    "AirConditioner", "AirPurifier", "Blind", "Camera", "Charger", "ContactSensor", "Cooktop", "Dishwasher",
    "Door", "Doorbell", "Dryer", "Elevator", "Fan", "GarageDoor", "GasValve", "Hub", "Humidifier",
    "Dehumidifier", "Irrigation", "KitchenHood", "LeakSensor", "Light", "Lock", "Microwave", "MotionSensor",
    "MultiFunctionalSensor", "NetworkAudio", "Others", "Oven", "PresenceSensor", "Projector", "Refrigerator",
    "RobotCleaner", "SecurityPanel", "Siren", "SmartPlug", "SmokeDetector", "Speaker", "Switch", "Television",
    "TempHumiditySensor", "Thermostat", "Vent", "Washer", "WaterHeater", "WaterValve", "Window",
)
UNKNOWN_CATEGORY = "Unknown"
# Other names SmartThings uses for a kind the list has (newer apps, other regions, device profiles).
CATEGORY_ALIASES = {"smartlock": "Lock", "shade": "Blind", "curtain": "Blind", "doorbell": "Doorbell",
                    "electricvehiclecharger": "Charger", "evcharger": "Charger", "tempsensor": "TempHumiditySensor",
                    "humiditysensor": "TempHumiditySensor", "temperaturesensor": "TempHumiditySensor",
                    "tv": "Television", "smarttv": "Television", "range": "Oven", "stove": "Cooktop",
                    "watersensor": "LeakSensor", "smokesensor": "SmokeDetector", "smartspeaker": "Speaker",
                    "vacuum": "RobotCleaner", "robotvacuum": "RobotCleaner", "outlet": "SmartPlug",
                    "plug": "SmartPlug", "valve": "WaterValve", "securitysystem": "SecurityPanel",
                    "rangehood": "KitchenHood", "hood": "KitchenHood"}
_BY_KEY = {c.lower(): c for c in DEVICE_CATEGORIES}


def category_key(value: str) -> str:
    return re.sub(r"[\s_\-]", "", value).lower()


def known_category(value: str) -> str:
    """A category as the project names it: the canonical spelling of a known one or an alias ("SmartLock"
    -> "Lock"), else the name as written (a category nobody listed is still a category)."""
    key = category_key(value)
    return _BY_KEY.get(key) or CATEGORY_ALIASES.get(key) or value

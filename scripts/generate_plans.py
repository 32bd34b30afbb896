#!/usr/bin/env python3
"""Generate the bundled `planner` dataset for tracerag's TraceablePlanner program.

Writes, under tracerag/datasets/data/planner/:

* playbooks/<domain>.txt  one playbook per domain, bullets in the `[slug-00001] helpful=X harmful=Y :: text` format
* templates.jsonl         reference templates (earlier plans / protocols), id `tpl-<sha256(text)[:8]>`
* cases.jsonl             requirement -> plan cases: the bullets and scored templates handed to the planner,
                          the ids a good plan uses, and a reference plan citing exactly those ids
* README.md               what the data is, its format and the counts

Everything is synthetic and written in this file (stdlib only, no network, no external data). Seeds are
fixed strings, so two runs are byte-identical. The data is validated before anything is written and the
script exits non-zero when a check fails.

    python scripts/generate_plans.py
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tracerag" / "datasets" / "data" / "planner"
SEED = "planner-2024"
DISTRACTOR_BULLETS = 4
DISTRACTOR_TEMPLATES = 3
SAFETY_SLUGS = {"safe", "hygiene", "hazard", "alert"}  # their bullets become safety notes in reference plans

# A domain: title, its slugs (playbook section order), bullets (slug, text, tags), templates (key, title,
# tags, materials, steps, outcome) and cases (task tag, requirements, extra feature tags). A bullet or
# template is gold for a case when its tags meet the case's tags ({task} | features); "*" meets every case.
DOMAINS: dict[str, dict] = {}


def domain(name: str, title: str, slugs: list[str], bullets, templates, cases) -> None:
    DOMAINS[name] = {"title": title, "slugs": slugs, "bullets": bullets, "templates": templates, "cases": cases}


domain(
    "lab", "Lab protocols", ["mat", "proc", "safe", "qc"],
    bullets=[
        ("mat", "Thaw enzymes and master mixes on ice and keep them there; never vortex a polymerase.", {"pcr"}),
        ("mat", "Calibrate the pH meter with two buffers that bracket the target pH before adjusting any buffer.",
         {"buffer"}),
        ("mat", "Pre-warm medium and trypsin to 37 °C; cold trypsin detaches cells unevenly.", {"passage"}),
        ("mat", "Keep competent cells at -80 °C until use and thaw them on ice for no more than 10 minutes.",
         {"transformation"}),
        ("mat", "Add the reducing agent (DTT or beta-mercaptoethanol) to the sample buffer fresh on the day.",
         {"sds_page"}),
        ("mat", "Use phase-lock tubes for phenol-chloroform extraction so the interphase is not carried over.",
         {"dna_extraction"}),
        ("proc", "Prepare a master mix for n+1 reactions and add the template last, so every tube gets the same mix.",
         {"pcr"}),
        ("proc", "Include a no-template control in every PCR run.", {"pcr"}),
        ("proc", "For GC-rich templates add 5% DMSO or a GC enhancer and denature at 98 °C.", {"gc_rich"}),
        ("proc", "Dissolve solids in about 80% of the final volume, adjust the pH, then bring to volume.", {"buffer"}),
        ("proc", "Count cells with trypan blue and seed by viable-cell count, not by split ratio alone.",
         {"passage"}),
        ("proc", "Heat-shock at exactly 42 °C for 45 seconds, then return the tube to ice for 2 minutes.",
         {"transformation"}),
        ("proc", "Recover transformed cells in SOC for 1 hour at 37 °C before plating on antibiotic.",
         {"transformation"}),
        ("proc", "Heat samples at 95 °C for 5 minutes and spin them down before loading.", {"sds_page"}),
        ("proc", "Load a prestained ladder in the first lane and leave no empty lanes between samples.",
         {"sds_page"}),
        ("proc", "Treat the lysate with RNase A before the organic extraction to avoid RNA contamination.",
         {"dna_extraction"}),
        ("proc", "Use a proofreading polymerase and the fewest cycles that give a band when the product is cloned.",
         {"cloning"}),
        ("safe", "Add concentrated acid to water, never water to acid, in a fume hood with a face shield.",
         {"corrosive"}),
        ("safe", "Work with human cell lines in a class II biosafety cabinet and decontaminate waste with 10% bleach.",
         {"biosafety"}),
        ("safe", "Unpolymerised acrylamide is a neurotoxin: wear nitrile gloves and prefer precast gels.",
         {"acrylamide"}),
        ("safe", "Handle phenol and chloroform only in a fume hood and collect them as halogenated organic waste.",
         {"volatile"}),
        ("safe", "Autoclave bacterial cultures and plates before disposal.", {"transformation"}),
        ("qc", "Check the product on an agarose gel next to a ladder before any downstream use.", {"pcr"}),
        ("qc", "Label every tube and plate with contents, date and initials, and record reagent lot numbers.", {"*"}),
        ("qc", "Measure A260/280 and A260/230; accept DNA with a 260/280 ratio between 1.8 and 2.0.",
         {"dna_extraction"}),
        ("qc", "Test cultures for mycoplasma monthly and before freezing stocks.", {"passage"}),
        ("qc", "Filter-sterilise (0.22 µm) buffers that will touch cells and write the final pH on the label.",
         {"sterile"}),
    ],
    templates=[
        ("pcr_std", "Routine Taq PCR (25 µL)", {"routine"},
         ["Taq master mix (2x)", "forward and reverse primers (10 µM)", "template DNA", "nuclease-free water",
          "PCR tubes", "thermocycler"],
         ["Mix 12.5 µL master mix, 1 µL of each primer and water to 24 µL per reaction",
          "Add 1 µL template (10-100 ng) to each tube",
          "Cycle: 95 °C 2 min; 30 x (95 °C 30 s, 58 °C 30 s, 72 °C 1 min/kb); 72 °C 5 min",
          "Hold at 4 °C and run 5 µL on a 1% agarose gel"],
         "a single band of the expected size and a clean no-template control"),
        ("pcr_hifi", "High-fidelity PCR for cloning", {"cloning"},
         ["proofreading polymerase with HF buffer", "dNTPs (10 mM)", "primers with restriction sites",
          "template DNA", "thermocycler", "gel extraction kit"],
         ["Assemble 50 µL reactions on ice with 1 U polymerase and 200 µM dNTPs",
          "Use 1-10 ng plasmid or 50 ng genomic template",
          "Cycle: 98 °C 30 s; 25 x (98 °C 10 s, 60 °C 20 s, 72 °C 30 s/kb); 72 °C 2 min",
          "Gel-purify the band and quantify before digestion"],
         "a single clean band ready for restriction cloning"),
        ("buffer", "Buffer preparation (Tris, phosphate, HEPES)", {"buffer"},
         ["buffer salt", "analytical balance", "calibrated pH meter", "HCl or NaOH for titration",
          "volumetric flask", "0.22 µm filter"],
         ["Weigh the salt for the final molarity and volume",
          "Dissolve in about 80% of the final volume of ultrapure water",
          "Titrate to the target pH at the temperature of use", "Bring to volume, mix and filter if needed"],
         "a buffer at the stated molarity and pH, labelled and stored at the right temperature"),
        ("passage", "Passaging adherent cells in T-75 flasks", {"passage"},
         ["complete medium", "PBS without Ca/Mg", "0.25% trypsin-EDTA", "T-75 flasks", "haemocytometer",
          "trypan blue"],
         ["Aspirate the medium and rinse once with 5 mL PBS", "Add 2 mL trypsin and incubate 3-5 min at 37 °C",
          "Neutralise with 8 mL medium and count viable cells",
          "Seed new flasks at the target density and return them to the incubator"],
         "healthy sub-confluent flasks at the planned density the next day"),
        ("transform", "Heat-shock transformation of chemically competent E. coli", {"transformation"},
         ["chemically competent E. coli", "plasmid DNA (1-100 ng)", "SOC medium", "selective agar plates",
          "42 °C water bath", "ice"],
         ["Add 1-5 µL plasmid to 50 µL thawed cells and incubate 30 min on ice",
          "Heat-shock in the water bath", "Add 950 µL SOC and shake 1 h at 37 °C",
          "Plate 100 µL on selective agar and incubate overnight at 37 °C"],
         "isolated colonies on the selective plate and none on the no-DNA control"),
        ("sds", "Laemmli SDS-PAGE", {"sds_page"},
         ["precast or hand-cast polyacrylamide gel", "Laemmli sample buffer with reducing agent",
          "Tris-glycine-SDS running buffer", "prestained protein ladder", "electrophoresis tank and power supply"],
         ["Mix samples 1:1 with sample buffer and denature", "Load 10-20 µg protein per lane",
          "Run at 120 V until the dye front reaches the bottom",
          "Stain with Coomassie or transfer for a western blot"],
         "sharp bands separated by molecular weight against the ladder"),
        ("dna", "Phenol-chloroform genomic DNA extraction", {"dna_extraction"},
         ["lysis buffer with proteinase K", "RNase A", "phenol:chloroform:isoamyl alcohol (25:24:1)",
          "isopropanol and 70% ethanol", "TE buffer", "microcentrifuge"],
         ["Lyse the sample overnight at 55 °C with proteinase K", "Add an equal volume of phenol:chloroform, mix, spin",
          "Precipitate DNA from the aqueous phase with isopropanol", "Wash with 70% ethanol and dissolve in TE"],
         "high-molecular-weight DNA with clean absorbance ratios"),
        ("western", "Western blot transfer and detection", set(),
         ["PVDF membrane", "transfer buffer", "blocking buffer", "primary and secondary antibodies",
          "ECL substrate"],
         ["Transfer at 100 V for 1 h in cold transfer buffer", "Block 1 h in 5% milk",
          "Incubate with primary antibody overnight at 4 °C", "Detect with HRP secondary and ECL"],
         "specific bands at the expected size with low background"),
    ],
    cases=[
        ("pcr", "Set up a 25 µL PCR to amplify the 750 bp GAPDH fragment from HeLa cDNA as a routine genotype "
                "check for 12 samples.", {"routine"}),
        ("pcr", "Amplify a 1.2 kb insert from the pUC19-lacZ plasmid so it can be cloned into an expression "
                "vector.", {"cloning"}),
        ("pcr", "Amplify a 600 bp promoter region with 72% GC content from human genomic DNA and clone it for "
                "sequencing.", {"gc_rich", "cloning"}),
        ("buffer", "Prepare 1 L of 50 mM Tris-HCl at pH 8.0 for protein purification.", {"corrosive"}),
        ("buffer", "Make 500 mL of sterile phosphate-buffered saline at pH 7.4 for washing cultured cells.",
         {"sterile"}),
        ("buffer", "Prepare 250 mL of 1 M HEPES stock at pH 7.5 that will go into cell culture medium.",
         {"sterile"}),
        ("passage", "Passage HEK293 cells at 85% confluence into four T-75 flasks for a transfection on Monday.",
         {"biosafety"}),
        ("passage", "Split a confluent flask of HeLa cells 1:6 and freeze two vials of the remainder.",
         {"biosafety"}),
        ("transformation", "Transform a ligation of a GFP reporter plasmid into DH5-alpha cells and plate on "
                           "ampicillin.", set()),
        ("transformation", "Transform 10 ng of pET28a-His-MBP into BL21(DE3) competent cells for protein expression "
                           "with kanamycin selection.", set()),
        ("sds_page", "Run an SDS-PAGE of eight purified protein fractions on a 12% gel to check purity.",
         {"acrylamide"}),
        ("sds_page", "Check the expression of a 45 kDa protein in induced and uninduced E. coli lysates on a "
                     "10% gel before a western blot.", {"acrylamide"}),
        ("dna_extraction", "Extract genomic DNA from mouse tail biopsies with a phenol-chloroform step for "
                           "genotyping.", {"volatile"}),
        ("dna_extraction", "Isolate high-molecular-weight DNA from 2 g of plant leaf tissue for long-read "
                           "sequencing.", {"volatile"}),
    ],
)

domain(
    "cooking", "Cooking", ["ingr", "cook", "hygiene", "serve"],
    bullets=[
        ("ingr", "Weigh flour and water instead of using cups; bread hydration is a ratio.", {"bread"}),
        ("ingr", "Use the sourdough starter at its peak, when it has doubled and is domed.", {"sourdough"}),
        ("ingr", "Bring eggs and butter to the temperature the recipe states; cold eggs break emulsions.",
         {"sauce"}),
        ("ingr", "Read every label, including 'may contain' statements, and buy sealed packs.", {"allergen"}),
        ("ingr", "Dry-brine meat with 1% of its weight in salt 12 to 24 hours ahead.", {"roast"}),
        ("cook", "Proof until the dough springs back slowly when poked, not by the clock.", {"bread"}),
        ("cook", "Preheat the oven with a baking stone or Dutch oven inside for 45 minutes.", {"bread"}),
        ("cook", "Roast to an internal temperature with a probe thermometer, not by minutes per kilo.", {"roast"}),
        ("cook", "Rest roasts for 15 to 20 minutes loosely tented in foil before carving.", {"roast"}),
        ("cook", "Start stock in cold water and keep it at a bare simmer; boiling clouds it.", {"stock"}),
        ("cook", "Add the fat in a thin stream while whisking; rescue a split sauce with a fresh yolk.", {"sauce"}),
        ("cook", "Fry in small batches to keep the oil at 170 to 180 °C, checked with a thermometer.", {"fried"}),
        ("cook", "Slightly undercook pasta and vegetables that will be reheated later.", {"mealprep"}),
        ("hygiene", "Cook poultry to 74 °C in the thickest part and never rinse raw chicken.", {"poultry"}),
        ("hygiene", "Cool cooked food from 60 to 21 °C within 2 hours and to 5 °C within 4 more, in shallow "
                    "containers.", {"cooling"}),
        ("hygiene", "Use pasteurised eggs for raw-egg sauces served to guests.", {"raw_egg"}),
        ("hygiene", "Clean surfaces and tools before allergen-free prep and make that food first.", {"allergen"}),
        ("hygiene", "Wash hands and keep raw and ready-to-eat foods on separate boards.", {"*"}),
        ("hygiene", "Never put water on an oil fire; keep a lid and a class F/K extinguisher at hand.", {"fried"}),
        ("serve", "Plan the carving and plating order so hot food reaches the table within 10 minutes.", {"roast"}),
        ("serve", "Label the allergen-free dish and serve it first to avoid cross-contact.", {"allergen"}),
        ("serve", "Label containers with contents and date and eat refrigerated portions within 3 days.",
         {"cooling"}),
        ("serve", "Cool bread on a rack for at least 1 hour before slicing.", {"bread"}),
        ("serve", "Drain fried food on a rack rather than paper and salt it immediately.", {"fried"}),
    ],
    templates=[
        ("loaf", "Same-day country loaf", {"yeast"},
         ["1 kg bread flour", "700 g water", "20 g salt", "7 g instant yeast", "Dutch oven"],
         ["Mix flour and water and rest 30 minutes", "Add salt and yeast and fold every 30 minutes for 2 hours",
          "Shape, proof in a banneton for about 1 hour", "Bake covered 20 minutes at 250 °C, uncovered 20 at 230 °C"],
         "two crusty loaves with an open crumb"),
        ("sourdough", "Overnight sourdough loaf", {"sourdough"},
         ["900 g bread flour", "100 g wholemeal flour", "750 g water", "200 g active starter", "22 g salt"],
         ["Feed the starter the evening before", "Mix, rest 1 hour, add salt and fold over 4 hours",
          "Shape and retard in the fridge overnight", "Bake straight from the fridge in a preheated Dutch oven"],
         "two tangy loaves with a blistered crust"),
        ("chicken", "Roast chicken with pan gravy", {"poultry"},
         ["whole chicken (1.5-2.5 kg)", "salt", "butter", "lemon and herbs", "roasting tin", "probe thermometer"],
         ["Dry-brine and air-dry the bird in the fridge", "Roast at 200 °C breast side up",
          "Check the thigh temperature from 50 minutes on", "Rest, then make gravy from the pan juices"],
         "juicy meat, crisp skin and a gravy from the drippings"),
        ("beef", "Roast beef for a crowd", {"beef"},
         ["beef rib or sirloin joint", "salt and pepper", "oil", "roasting rack", "probe thermometer"],
         ["Bring the joint to room temperature for 1 hour", "Sear at 230 °C for 20 minutes",
          "Roast at 160 °C to 52 °C inside for medium-rare", "Rest and carve against the grain"],
         "evenly pink slices from edge to centre"),
        ("stock", "Chicken or vegetable stock", {"stock"},
         ["bones or vegetable trimmings", "onion, carrot, celery", "bay leaf and peppercorns", "large stockpot",
          "fine sieve"],
         ["Cover the ingredients with cold water", "Bring slowly to a simmer and skim",
          "Simmer 3 hours for chicken or 1 hour for vegetables", "Strain, cool quickly and skim the fat"],
         "a clear, well-flavoured stock ready to portion"),
        ("hollandaise", "Hollandaise and other warm emulsions", {"sauce"},
         ["egg yolks", "clarified butter", "lemon juice", "bain-marie", "whisk"],
         ["Whisk the yolks with lemon over barely simmering water until thick",
          "Whisk in the warm butter slowly", "Season and hold warm, not hot, for at most 1 hour"],
         "a smooth, stable sauce that coats a spoon"),
        ("cupcakes", "Allergen-free party cupcakes", {"allergen"},
         ["certified allergen-free flour and chocolate", "oil instead of butter", "plant milk", "paper cases",
          "new or scrubbed tins"],
         ["Check every label against the allergy list", "Bake the cupcakes in scrubbed tins at 180 °C for 20 minutes",
          "Ice once completely cool", "Pack separately and label"],
         "cupcakes safe for the allergic child, indistinguishable from the others"),
        ("mealprep", "Weekly meal prep: grain bowls", {"mealprep"},
         ["grains", "roasted vegetables", "protein", "sauces in small pots", "airtight containers"],
         ["Cook grains and proteins in bulk", "Roast vegetables on two trays", "Portion into containers, sauce apart",
          "Cool quickly and refrigerate or freeze"],
         "five balanced lunches that reheat well"),
        ("fish", "Beer-battered fish", {"fried"},
         ["firm white fish", "flour", "cold beer", "baking powder", "neutral oil", "deep pan and thermometer"],
         ["Whisk flour, baking powder and cold beer into a thick batter", "Heat oil to 180 °C",
          "Dust the fish in flour, dip and fry 4-6 minutes", "Drain and serve at once"],
         "crisp, light batter around moist fish"),
    ],
    cases=[
        ("bread", "Bake two same-day country loaves for a Saturday lunch.", {"yeast"}),
        ("bread", "Bake four loaves of sourdough for a farmers' market stall on Sunday morning.", {"sourdough"}),
        ("bread", "Bake a sourdough loaf for a dinner party, starting from a starter kept in the fridge.",
         {"sourdough"}),
        ("roast", "Roast a 2 kg chicken for a family dinner of six.", {"poultry"}),
        ("roast", "Roast a 3 kg beef sirloin, medium-rare, for twelve guests at Christmas.", {"beef"}),
        ("roast", "Roast two chickens for a dinner party of ten and keep the leftovers for sandwiches.",
         {"poultry", "cooling"}),
        ("stock", "Make 5 L of chicken stock and freeze it in portions for the month.", {"cooling"}),
        ("stock", "Make a vegetable stock for a risotto tonight and keep the rest for the week.", {"cooling"}),
        ("sauce", "Make hollandaise for eggs Benedict for eight brunch guests.", {"raw_egg"}),
        ("sauce", "Serve asparagus with a warm butter emulsion sauce for a dinner of four, including a pregnant "
                  "guest.", {"raw_egg"}),
        ("allergen", "Bake 24 cupcakes for a school class where one child has a severe nut allergy.", set()),
        ("allergen", "Make birthday cupcakes for a party where two children are allergic to milk and egg.", set()),
        ("mealprep", "Prep five grain-bowl lunches for the working week on Sunday.", {"cooling"}),
        ("fried", "Deep-fry battered cod for fish and chips for six people.", set()),
    ],
)

domain(
    "home", "Home repair", ["tool", "repair", "hazard", "finish"],
    bullets=[
        ("tool", "Use a 6-inch and a 10-inch knife; a wide final coat feathers the edge.", {"drywall"}),
        ("tool", "Take the old cartridge to the store to match it; brands differ by millimetres.", {"faucet"}),
        ("tool", "Verify the circuit is dead with a non-contact tester checked first on a known live outlet.",
         {"electrical"}),
        ("tool", "Use a grout saw or an oscillating tool with a carbide blade and keep it off the tile edges.",
         {"tile"}),
        ("tool", "A 3-inch screw through the top hinge into the stud pulls a sagging door back into line.",
         {"door"}),
        ("repair", "For holes over 15 cm, screw in a backing board or cut a California patch.", {"large_hole"}),
        ("repair", "Apply thin coats of compound, let each dry fully and sand between coats with 120 grit.",
         {"drywall"}),
        ("repair", "Shut off the supply valves and open the tap to release pressure before taking anything apart.",
         {"faucet"}),
        ("repair", "Grease new O-rings with silicone plumber's grease, never petroleum grease.", {"faucet"}),
        ("repair", "Photograph the wiring before disconnecting and match wire colours when reconnecting.",
         {"electrical"}),
        ("repair", "Remove grout to at least two-thirds of the tile depth before regrouting.", {"tile"}),
        ("repair", "Find the rub point with chalk or a slip of paper before planing a door.", {"door"}),
        ("repair", "Fill and sand defects, then spot-prime the filler before the top coat.", {"paint"}),
        ("repair", "Scoop debris out by hand, then flush the downspouts with a hose before sealing joints.",
         {"gutter"}),
        ("hazard", "Switch off the breaker, tape it off with a note and tell the household.", {"electrical"}),
        ("hazard", "In homes built before 1978, test for lead before sanding; if positive, wet-sand and use a "
                   "HEPA vacuum.", {"old_paint"}),
        ("hazard", "Wear an FFP2/N95 mask and eye protection when cutting grout or sanding.", {"dust"}),
        ("hazard", "Set ladders at a 1:4 angle, keep three points of contact and have someone foot the ladder.",
         {"ladder"}),
        ("hazard", "Keep a towel and a bucket under the work and check for drips again after 24 hours.", {"water"}),
        ("finish", "Prime patched areas before painting so the sheen matches the rest of the wall.", {"patch_paint"}),
        ("finish", "Seal cement grout after it has cured for 72 hours.", {"tile"}),
        ("finish", "Cut in the edges first, then roll in W-shaped passes keeping a wet edge.", {"paint"}),
        ("finish", "Seal a planed door edge with primer or paint so it does not swell again.", {"door"}),
        ("finish", "Check the gutter slope (about 5 mm per metre toward the downspout) before sealing.", {"gutter"}),
        ("finish", "Photograph the finished work and note the materials and colours used.", {"*"}),
    ],
    templates=[
        ("drywall", "Drywall patch for small and large holes", {"drywall"},
         ["drywall offcut or patch kit", "joint compound", "mesh tape", "6- and 10-inch knives", "120-grit sanding "
          "sponge", "primer"],
         ["Square the hole and add backing if it is large", "Fix the patch and tape the seams",
          "Apply three thin coats, widening each", "Sand smooth and prime"],
         "a flat patch that disappears under paint"),
        ("faucet", "Cartridge faucet repair", {"faucet"},
         ["replacement cartridge", "O-rings", "silicone grease", "hex keys and adjustable wrench", "towel"],
         ["Turn off the supply and open the tap", "Remove the handle and retaining clip",
          "Pull the old cartridge and fit the new one with greased O-rings",
          "Reassemble, restore the water and test hot and cold"],
         "a tap that closes fully with no drip"),
        ("fixture", "Replacing a light fixture or outlet", {"electrical"},
         ["new fixture or outlet", "voltage tester", "wire nuts or lever connectors", "screwdrivers", "stepladder"],
         ["Kill the circuit at the breaker and test", "Disconnect the old unit noting each wire",
          "Connect earth, neutral then live to the new unit", "Mount, restore power and test"],
         "a working fixture with every connection tight and covered"),
        ("grout", "Regrouting a tiled surface", {"tile"},
         ["grout saw or oscillating tool", "cement or epoxy grout", "rubber float", "sponge and bucket",
          "grout sealer"],
         ["Rake out the old grout", "Vacuum the joints and dampen them", "Press new grout in diagonally with the "
          "float", "Sponge off the haze and let it cure"],
         "full, even joints with no haze on the tiles"),
        ("paint", "Repainting an interior room", {"paint"},
         ["filler", "sandpaper", "primer", "wall paint", "angled brush and roller", "dust sheets and tape"],
         ["Clear the room and cover the floor", "Fill, sand and clean the walls", "Cut in and roll the first coat",
          "Apply the second coat after the recommended drying time"],
         "an even finish with clean edges"),
        ("door", "Fixing a sticking interior door", {"door"},
         ["long screws", "chalk", "block plane", "primer or paint", "screwdrivers"],
         ["Tighten all hinge screws", "Mark where the door rubs", "Plane the high spot in small passes",
          "Seal the bare edge"],
         "a door that closes without force and latches"),
        ("gutter", "Gutter cleaning and sealing", {"gutter"},
         ["ladder and stabiliser", "gloves and scoop", "garden hose", "gutter sealant", "bucket"],
         ["Set up the ladder safely", "Remove debris section by section", "Flush and check the flow to the "
          "downspouts", "Seal leaking joints"],
         "gutters that drain fully with no leaks at the joints"),
        ("fan", "Installing a ceiling fan", set(),
         ["fan kit", "fan-rated ceiling box", "voltage tester", "stepladder"],
         ["Check the ceiling box is fan-rated", "Assemble the motor and mount the bracket",
          "Wire and hang the fan", "Fit the blades and balance"],
         "a quiet fan with no wobble"),
    ],
    cases=[
        ("drywall", "Patch a doorknob-sized hole in the hallway drywall and paint over it.", {"patch_paint", "dust"}),
        ("drywall", "Repair a 20 cm hole in the bedroom wall where a shelf was torn out.", {"large_hole", "dust"}),
        ("drywall", "Fill a dozen nail holes and a small dent in the living room before hanging pictures.",
         {"patch_paint"}),
        ("faucet", "Replace the cartridge of a dripping single-lever kitchen faucet.", {"water"}),
        ("faucet", "Fix a bathroom basin tap that keeps running after it is turned off.", {"water"}),
        ("electrical", "Replace an old ceiling light in the kitchen with a new LED fixture.", {"ladder"}),
        ("electrical", "Swap a cracked wall outlet in the garage for a new one.", set()),
        ("tile", "Regrout 4 m² of mouldy shower wall tiles.", {"dust"}),
        ("tile", "Redo the cracked grout along the kitchen backsplash.", {"dust"}),
        ("paint", "Repaint the 1960s living room, about 40 m² of walls, in a new colour.", {"old_paint"}),
        ("paint", "Freshen up a child's bedroom with new paint after filling some cracks.", set()),
        ("door", "Fix the bathroom door that sticks at the top corner every winter.", set()),
        ("door", "Make the bedroom door close and latch again after the house settled.", set()),
        ("gutter", "Clean out and reseal the gutters of a two-storey house before autumn.", {"ladder"}),
    ],
)

domain(
    "events", "Event planning", ["venue", "budget", "guest", "timeline"],
    bullets=[
        ("venue", "Visit the venue at the same time of day as the event to check light, noise and parking.",
         {"wedding", "gala"}),
        ("venue", "Book a rain plan (a marquee or indoor room of the same capacity) when you book the site.",
         {"outdoor"}),
        ("venue", "Size rooms for the largest session plus 10% and check the Wi-Fi for every attendee's devices.",
         {"conference"}),
        ("venue", "Choose a venue with a fenced play area and toilets close by.", {"kids"}),
        ("venue", "Confirm step-free access and an accessible toilet at every venue.", {"*"}),
        ("budget", "Keep a 10-15% contingency line and track deposits against their due dates.",
         {"wedding", "conference", "gala"}),
        ("budget", "Ask sponsors for prizes and printing in kind before paying for them.", {"fundraising"}),
        ("budget", "Book group travel early and cap the per-person spend in the invitation.", {"travel"}),
        ("budget", "Budget food and favours per child and add two spare favours.", {"kids"}),
        ("guest", "Send save-the-dates 6-8 months ahead and collect dietary needs with the RSVP.", {"wedding"}),
        ("guest", "Open registration with a ticket cap and a waitlist; send joining instructions a week before.",
         {"conference"}),
        ("guest", "Give remote attendees a moderator and a Q&A channel, and test the stream end to end the day "
                  "before.", {"hybrid"}),
        ("guest", "Collect emergency contacts and allergies from parents with the RSVP.", {"kids"}),
        ("guest", "Survey the team for goals and constraints before fixing the agenda.", {"offsite"}),
        ("guest", "Tell guests the fundraising goal and show progress during the evening.", {"fundraising"}),
        ("timeline", "Build a minute-by-minute run sheet and share it with every vendor.", {"wedding", "gala"}),
        ("timeline", "Leave 15-minute buffers between sessions and a long lunch for networking.", {"conference"}),
        ("timeline", "Keep a children's party to 2 hours and switch activity every 20-30 minutes.", {"kids"}),
        ("timeline", "Check the forecast 72 and 24 hours ahead and decide on the rain plan at a fixed time.",
         {"outdoor"}),
        ("timeline", "End each offsite day with a written summary of decisions and owners.", {"offsite"}),
        ("timeline", "Schedule the appeal after the main course and before dessert.", {"fundraising"}),
    ],
    templates=[
        ("wedding", "Wedding reception plan", {"wedding"},
         ["venue contract", "caterer and menu", "seating plan", "music and PA", "run sheet"],
         ["Fix date, budget and guest count", "Book venue, caterer and music", "Send invitations and collect RSVPs",
          "Finalise seating and the run sheet two weeks before"],
         "a reception that runs to time with every guest seated and fed"),
        ("conference", "Two-day technical conference", {"conference"},
         ["venue with main hall and breakout rooms", "registration system", "speaker agreements", "AV and "
          "streaming kit", "catering"],
         ["Set the programme and call for talks", "Book venue and AV", "Open registration",
          "Brief speakers and volunteers the week before"],
         "two days of talks that start on time, with recorded sessions"),
        ("hybrid", "Hybrid event checklist", {"hybrid"},
         ["streaming platform", "cameras and microphones", "remote moderator", "Q&A tool"],
         ["Choose the platform and test bandwidth", "Assign a remote moderator per room",
          "Run a full technical rehearsal", "Record and publish sessions afterwards"],
         "remote attendees who can see, hear and ask questions"),
        ("kids", "Children's birthday party", {"kids"},
         ["venue or garden", "games and craft materials", "food and cake", "party bags", "first-aid kit"],
         ["Pick a theme and a 2-hour slot", "Invite and collect allergies", "Plan games in 20-minute blocks",
          "Set up food, cake and party bags"],
         "happy children collected on time, with nobody left out"),
        ("offsite", "Team offsite agenda", {"offsite"},
         ["venue with breakout space", "travel bookings", "agenda", "facilitator", "materials"],
         ["Agree the goals with the team lead", "Book venue and travel", "Draft an agenda mixing work and social "
          "time", "Send pre-reads a week before"],
         "agreed decisions with owners and a team that met its goals"),
        ("gala", "Charity dinner plan", {"gala"},
         ["venue", "catering", "auction items or raffle", "speakers", "payment terminals"],
         ["Set the fundraising target", "Book venue and catering", "Secure auction items and speakers",
          "Brief volunteers on payments and the run of the evening"],
         "an evening that meets its fundraising target"),
        ("picnic", "Community picnic in a park", {"picnic"},
         ["park permit", "tables and shade", "games", "bins and recycling", "first-aid kit"],
         ["Apply for the park permit", "Recruit volunteers and plan the layout", "Promote to neighbours",
          "Set up, run games and clear the site"],
         "a well-attended picnic and a clean park afterwards"),
    ],
    cases=[
        ("wedding", "Plan a 120-guest wedding reception in a country house in June.", set()),
        ("wedding", "Organise a garden wedding for 80 guests in September.", {"outdoor"}),
        ("wedding", "Plan a small city wedding lunch for 40 guests in a restaurant.", set()),
        ("conference", "Organise a two-day developer conference for 300 attendees.", set()),
        ("conference", "Run a one-day data science conference for 150 people on site and 500 online.", {"hybrid"}),
        ("conference", "Plan a hybrid internal tech summit for 80 staff across three offices.", {"hybrid"}),
        ("kids", "Plan a 6th birthday party for 15 children at home.", set()),
        ("kids", "Organise a 9th birthday party in the park for 20 kids.", {"outdoor"}),
        ("offsite", "Run a three-day strategy offsite for a 25-person team in Lisbon.", {"travel"}),
        ("offsite", "Plan a one-day team offsite for 12 engineers at a local venue.", set()),
        ("gala", "Plan a charity dinner for 200 guests raising money for a children's hospital.", {"fundraising"}),
        ("gala", "Organise a fundraising gala with an auction for a local animal shelter.", {"fundraising"}),
        ("picnic", "Organise a community picnic in the park for 150 neighbours.", {"outdoor"}),
        ("picnic", "Plan a summer picnic for 60 volunteers of a food bank.", {"outdoor"}),
    ],
)

domain(
    "data", "Data-pipeline runbooks", ["ops", "data-check", "alert", "rollback"],
    bullets=[
        ("ops", "Run backfills in date-partition chunks with a concurrency cap so production jobs keep their slots.",
         {"backfill"}),
        ("ops", "Write to a staging table and swap partitions atomically; never overwrite in place.",
         {"backfill"}),
        ("ops", "Read the failed task's logs and the upstream freshness before re-running anything.", {"incident"}),
        ("ops", "Re-run from the failed task, not the whole DAG, once the cause is fixed.", {"incident"}),
        ("ops", "Land raw data unchanged in a raw zone and version the parser separately.", {"onboarding"}),
        ("ops", "Profile the job (stages, skew, spill) before changing the cluster size.", {"cost"}),
        ("ops", "Partition and cluster by the columns the job filters on, and prune before joining.", {"cost"}),
        ("ops", "Find every consumer from lineage and 90 days of query logs before turning anything off.",
         {"decommission"}),
        ("data-check", "Compare row counts and key sums per partition against the source after every load.",
         {"backfill", "incident"}),
        ("data-check", "Add a new column as nullable first; make it required only after all writers set it.",
         {"migration"}),
        ("data-check", "Define schema and freshness expectations (not-null keys, maximum lag) as pipeline tests.",
         {"onboarding"}),
        ("data-check", "Check duplicates, late partitions and timezone shifts before blaming the business.",
         {"dq"}),
        ("data-check", "Classify columns on arrival and hash or drop personal data before the analytics layer.",
         {"pii"}),
        ("alert", "Tell data consumers on the status channel with an ETA within 15 minutes of an SLA miss.",
         {"sla"}),
        ("alert", "Give every new table a freshness alert with an owner and a runbook link.", {"onboarding"}),
        ("alert", "Alert on change against the same weekday, not on absolute thresholds.", {"dq"}),
        ("alert", "Announce a shutdown date twice, two weeks and two days ahead.", {"decommission"}),
        ("rollback", "Keep the old column and a dual-write period so rolling back is a config change.",
         {"breaking"}),
        ("rollback", "Snapshot the target partitions before a backfill so they can be restored.", {"backfill"}),
        ("rollback", "Archive the last outputs and tag the code for 90 days after a shutdown.", {"decommission"}),
        ("rollback", "Change one setting at a time and keep the previous config to revert a regression.", {"cost"}),
        ("rollback", "Record every action with its time in the incident log as you go.", {"*"}),
    ],
    templates=[
        ("backfill", "Partitioned backfill runbook", {"backfill"},
         ["orchestrator access", "staging dataset", "partition list", "validation query"],
         ["Freeze the affected date range and snapshot it", "Backfill into staging in chunks",
          "Validate each chunk against the source", "Swap partitions and notify consumers"],
         "the date range reloaded, validated and visible to consumers with no downtime"),
        ("migration", "Backward-compatible schema change", {"migration"},
         ["migration script", "list of writers and readers", "feature flag or config switch"],
         ["Add the column as nullable", "Deploy writers that fill it", "Backfill history",
          "Switch readers, then enforce the constraint"],
         "the new column populated and used with no broken downstream job"),
        ("incident", "Nightly ETL incident runbook", {"incident"},
         ["orchestrator UI and logs", "status channel", "incident log"],
         ["Acknowledge and open the incident log", "Find the failing task and the root cause",
          "Fix and re-run from the failed task", "Validate outputs and close with a summary"],
         "fresh, validated tables and consumers informed throughout"),
        ("onboarding", "New source onboarding checklist", {"onboarding"},
         ["source credentials", "raw landing zone", "schema contract", "data tests", "alerting"],
         ["Agree the schema contract with the provider", "Land raw files unchanged", "Parse and model into "
          "staging", "Add tests, alerts and documentation"],
         "a documented, tested table refreshed on schedule"),
        ("decommission", "Pipeline decommissioning runbook", {"decommission"},
         ["lineage graph", "query logs", "announcement channel", "archive bucket"],
         ["List every consumer", "Migrate or get sign-off from each", "Announce and pause the pipeline",
          "Archive outputs and delete resources"],
         "the pipeline removed with no consumer surprised"),
        ("cost", "Spark job cost review", {"cost"},
         ["job history and metrics", "cluster configuration", "sample data"],
         ["Profile the last runs", "Fix skew and pruning", "Right-size executors", "Compare cost and run time over "
          "a week"],
         "a cheaper job that still finishes within its SLA"),
        ("dq", "Metric drop investigation", {"dq"},
         ["dashboard and its queries", "lineage", "source tables"],
         ["Reproduce the drop in the warehouse", "Walk lineage upstream table by table", "Check loads, joins and "
          "filters for the day", "Report the cause and fix or confirm the business change"],
         "a confirmed cause and a corrected or explained metric"),
    ],
    cases=[
        ("backfill", "Backfill the orders fact table for 1-14 March after a bug dropped refunded orders.", set()),
        ("backfill", "Reload three months of clickstream sessions after the sessionisation logic changed.", set()),
        ("backfill", "Backfill the daily revenue table for last week after the currency rates feed was late.",
         {"sla"}),
        ("migration", "Add a customer_segment column to the customers table read by 14 downstream jobs.", set()),
        ("migration", "Rename the amount column to amount_eur in the payments table without breaking "
                      "dashboards.", {"breaking"}),
        ("incident", "Recover the nightly finance ETL that failed at the currency-conversion task with the "
                     "CFO report due at 8am.", {"sla"}),
        ("incident", "The nightly inventory load timed out on the warehouse merge step; get the tables fresh "
                     "again.", {"sla"}),
        ("onboarding", "Onboard a new CRM export feed into the warehouse.", {"pii"}),
        ("onboarding", "Bring a partner's daily shipment CSV files into the data platform.", set()),
        ("decommission", "Decommission the legacy Hadoop marketing-attribution pipeline.", set()),
        ("decommission", "Turn off the old weekly email-metrics job now that the new one has run for a month.",
         set()),
        ("cost", "Cut the cost of the hourly sessions Spark job by 30%.", set()),
        ("dq", "Investigate a 20% drop in daily active users on yesterday's dashboard.", set()),
        ("dq", "Find out why weekly conversion rate fell from 3.1% to 2.4% overnight.", set()),
    ],
)


# ------------------------------------------------------------------------------------------------------


def template_id(text: str) -> str:
    """Must equal tracerag.memory.playbook.template_id (the loader's tests check it)."""
    return "tpl-" + hashlib.sha256(text.strip().encode("utf-8")).hexdigest()[:8]


def template_text(materials: list[str], steps: list[str], outcome: str) -> str:
    lines = [f"Materials: {'; '.join(materials)}."]
    lines += [f"{n}. {s}." for n, s in enumerate(steps, start=1)]
    lines.append(f"Expected outcome: {outcome}.")
    return "\n".join(lines)


def counters(rng: random.Random) -> tuple[int, int]:
    helpful = rng.choice([0, 0, 1, 2, 3, 4, 5, 7, 9, 12])
    harmful = rng.choice([0, 0, 0, 0, 0, 1, 1, 2, 3])
    return helpful, harmful


def build_domain(name: str, spec: dict) -> tuple[str, list[dict], list[dict], list[dict]]:
    """(playbook text, bullet rows, template rows, case rows) for one domain."""
    rng = random.Random(f"{SEED}:{name}:counters")
    numbers: dict[str, int] = {}
    bullets = []
    for slug, text, tags in spec["bullets"]:
        numbers[slug] = numbers.get(slug, 0) + 1
        helpful, harmful = counters(rng)
        bullets.append({"id": f"{slug}-{numbers[slug]:05d}", "slug": slug, "text": text, "tags": set(tags),
                        "helpful": helpful, "harmful": harmful})
    lines = [f"# {spec['title']} playbook (synthetic; see README.md)"]
    for slug in spec["slugs"]:
        lines += ["", f"## {slug}"]
        lines += [f"[{b['id']}] helpful={b['helpful']} harmful={b['harmful']} :: {b['text']}"
                  for b in bullets if b["slug"] == slug]
    playbook = "\n".join(lines) + "\n"

    templates = []
    for key, title, tags, materials, steps, outcome in spec["templates"]:
        text = template_text(materials, steps, outcome)
        templates.append({"id": template_id(text), "key": key, "title": title, "text": text, "tags": set(tags),
                          "materials": materials, "steps": steps, "outcome": outcome})

    cases = []
    for n, (task, requirements, features) in enumerate(spec["cases"], start=1):
        case_id = f"{name}-{n:03d}"
        tags = {task, *features}
        gold_b = [b for b in bullets if b["tags"] & tags or "*" in b["tags"]]
        gold_t = [t for t in templates if t["tags"] & tags]
        rng = random.Random(f"{SEED}:{case_id}")
        others_b = [b for b in bullets if b not in gold_b]
        shown_b = gold_b + rng.sample(others_b, min(DISTRACTOR_BULLETS, len(others_b)))
        order = {b["id"]: i for i, b in enumerate(bullets)}
        shown_b.sort(key=lambda b: order[b["id"]])  # playbook order, as a retriever over the file returns them
        others_t = [t for t in templates if t not in gold_t]
        shown_t = [(t, round(rng.uniform(0.62, 0.88), 3)) for t in gold_t]
        shown_t += [(t, round(rng.uniform(0.35, 0.70), 3))
                    for t in rng.sample(others_t, min(DISTRACTOR_TEMPLATES, len(others_t)))]
        shown_t.sort(key=lambda pair: (-pair[1], pair[0]["id"]))
        cases.append({
            "id": case_id, "domain": name, "requirements": requirements, "playbook": f"playbooks/{name}.txt",
            "bullet_ids": [b["id"] for b in shown_b],
            "templates": [{"id": t["id"], "score": score} for t, score in shown_t],
            "gold_bullet_ids": [b["id"] for b in gold_b], "gold_template_ids": [t["id"] for t in gold_t],
            "reference_plan": reference_plan(requirements, gold_b, gold_t),
        })
    return playbook, bullets, templates, cases


def reference_plan(requirements: str, gold_b: list[dict], gold_t: list[dict]) -> dict:
    """A plan that follows the gold templates step by step and cites every gold id once or more."""
    materials = list(dict.fromkeys(m for t in gold_t for m in t["materials"]))
    steps = [{"text": f"{s} [{t['id']}].", "cites": [t["id"]]} for t in gold_t for s in t["steps"]]
    steps += [{"text": f"{b['text'].rstrip('.')} [{b['id']}].", "cites": [b["id"]]}
              for b in gold_b if b["slug"] not in SAFETY_SLUGS]
    safety = [f"{b['text'].rstrip('.')} [{b['id']}]." for b in gold_b if b["slug"] in SAFETY_SLUGS]
    outcome = "; ".join(t["outcome"] for t in gold_t)
    return {"objective": requirements, "materials": materials, "steps": steps, "safety_notes": safety,
            "expected_outcome": outcome[:1].upper() + outcome[1:] + "." if outcome else ""}


BULLET_LINE = re.compile(r"\[([a-z][a-z0-9]*(?:[-_][a-z0-9]+)*)-(\d{5})\] helpful=(0|[1-9]\d*) "
                         r"harmful=(0|[1-9]\d*) :: .*\S.*")


def validate(domains: dict[str, tuple]) -> list[str]:
    errors: list[str] = []
    seen_cases, seen_bullets, seen_templates = set(), set(), set()
    total = 0
    for name, (playbook, bullets, templates, cases) in domains.items():
        spec = DOMAINS[name]
        known_tags = {task for task, _, _ in spec["cases"]} | {f for _, _, fs in spec["cases"] for f in fs} | {"*"}
        for line in playbook.splitlines():
            if line.startswith("[") and not BULLET_LINE.fullmatch(line):
                errors.append(f"{name}: malformed bullet line {line!r}")
        for b in bullets:
            if b["id"] in seen_bullets:
                errors.append(f"{name}: bullet id {b['id']} repeats across domains")
            seen_bullets.add(b["id"])
            if b["slug"] not in spec["slugs"]:
                errors.append(f"{name}: bullet {b['id']} has a slug outside {spec['slugs']}")
            if not b["tags"] <= known_tags:
                errors.append(f"{name}: bullet {b['id']} has tags no case uses: {sorted(b['tags'] - known_tags)}")
        for t in templates:
            if t["id"] in seen_templates:
                errors.append(f"{name}: template id {t['id']} repeats")
            seen_templates.add(t["id"])
            if not t["tags"] <= known_tags:
                errors.append(f"{name}: template {t['key']} has tags no case uses: {sorted(t['tags'] - known_tags)}")
        gold_ever = set()
        for case in cases:
            total += 1
            if case["id"] in seen_cases:
                errors.append(f"{case['id']}: id repeats")
            seen_cases.add(case["id"])
            if len(case["gold_bullet_ids"]) < 2 or not case["gold_template_ids"]:
                errors.append(f"{case['id']}: needs at least 2 gold bullets and 1 gold template")
            shown = set(case["bullet_ids"]) | {t["id"] for t in case["templates"]}
            gold = set(case["gold_bullet_ids"]) | set(case["gold_template_ids"])
            if not gold <= shown:
                errors.append(f"{case['id']}: gold ids not shown: {sorted(gold - shown)}")
            if len(shown) - len(gold) < 4:
                errors.append(f"{case['id']}: fewer than 4 distractors")
            cited = {c for s in case["reference_plan"]["steps"] for c in s["cites"]}
            cited |= {m for note in case["reference_plan"]["safety_notes"] for m in re.findall(r"\[([^\]]+)\]", note)}
            if cited != gold:
                errors.append(f"{case['id']}: reference plan cites {sorted(cited)}, gold is {sorted(gold)}")
            gold_ever |= gold
        never = [b["id"] for b in bullets if b["id"] not in gold_ever]
        never += [t["key"] for t in templates if t["id"] not in gold_ever and t["tags"]]
        if never:
            errors.append(f"{name}: never gold for any case: {never}")
    if total < 60:
        errors.append(f"only {total} cases; need at least 60")
    return errors


README = """# `planner` - bundled evaluation data for TraceablePlanner

Requirement -> plan cases for tracerag's `TraceablePlanner` program, which writes a structured plan from
requirements, playbook bullets and retrieved reference templates, and records which bullets and templates
it used. Each case says which bullets and templates were handed to the planner and which of them a good
plan uses (the gold ids), so used-id recall/precision and citation metrics can be computed.

The data was written for tracerag and is **synthetic**: every bullet, template, requirement and score comes
from the tables in `scripts/generate_plans.py` (Python stdlib only, fixed seeds, no network, no external
data). The advice is written to be sensible but it is not a safety reference: do not follow it as a
protocol. Regenerate with

```bash
python scripts/generate_plans.py
```

Two runs give byte-identical files. The script validates the data before writing (unique ids; bullet lines
in the exact format; every gold id is among the ids shown; at least 4 distractors a case; every bullet and
every tagged template is gold for some case; the reference plan cites exactly the gold ids) and exits
non-zero when a check fails.

## Files

- `playbooks/<domain>.txt` - one playbook per domain: `#` headings, blank lines and bullets, one a line,
  `[<slug>-<5 digits>] helpful=<n> harmful=<n> :: <text>` (read it with
  `tracerag.memory.playbook.load_playbook`). Ids are unique across all domains.
- `templates.jsonl` - one reference template a line: `{"id", "domain", "title", "text"}`. `id` is
  `tpl-` + the first 8 hex digits of SHA-256 of the stripped text (`tracerag.memory.playbook.template_id`).
- `cases.jsonl` - one case a line:
  - `id` (`<domain>-<nnn>`), `domain`, `requirements` (the planner's input text);
  - `playbook` - the playbook file, relative to this directory;
  - `bullet_ids` - the bullets handed to the planner (the gold ones plus distractors), in playbook order;
  - `templates` - the retrieved templates handed to the planner, best first: `[{"id", "score"}]`
    (scores in [0, 1]; a distractor sometimes outscores a gold template, as in real retrieval);
  - `gold_bullet_ids`, `gold_template_ids` - the ids a good plan uses (a subset of the ones handed over);
  - `reference_plan` - a plan in the `Plan` shape (`objective`, `materials`, `steps: [{"text", "cites"}]`,
    `safety_notes`, `expected_outcome`) that follows the gold templates and cites exactly the gold ids.
    It is mechanical (template steps, then bullets), meant as a labelled target, not as prose to imitate.

Splits (`train`/`dev`/`test`) are the stable hash of the case id shared by all tracerag datasets
(`tracerag.datasets.smarthome.split_of`). Load with `tracerag.datasets.planner.load_planner_cases`.

## Counts

{counts}
"""


def main() -> int:
    built = {name: build_domain(name, spec) for name, spec in DOMAINS.items()}
    errors = validate(built)
    if errors:
        print("\n".join(errors), file=sys.stderr)
        return 1
    if OUT.exists():
        shutil.rmtree(OUT)
    (OUT / "playbooks").mkdir(parents=True)
    template_rows, case_rows, table = [], [], []
    table += ["| domain | slugs | bullets | templates | cases | gold bullets / case | gold templates / case |",
              "|---|---|---:|---:|---:|---:|---:|"]
    for name, (playbook, bullets, templates, cases) in built.items():
        (OUT / "playbooks" / f"{name}.txt").write_text(playbook, encoding="utf-8", newline="\n")
        template_rows += [{"id": t["id"], "domain": name, "title": t["title"], "text": t["text"]} for t in templates]
        case_rows += cases
        mean_b = sum(len(c["gold_bullet_ids"]) for c in cases) / len(cases)
        mean_t = sum(len(c["gold_template_ids"]) for c in cases) / len(cases)
        table.append(f"| `{name}` ({DOMAINS[name]['title']}) | {', '.join(f'`{s}`' for s in DOMAINS[name]['slugs'])} "
                     f"| {len(bullets)} | {len(templates)} | {len(cases)} | {mean_b:.1f} | {mean_t:.1f} |")
    for filename, rows in (("templates.jsonl", template_rows), ("cases.jsonl", case_rows)):
        with open(OUT / filename, "w", encoding="utf-8", newline="\n") as f:
            for row in rows:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
    table.append(f"| **total** | | {sum(len(b[1]) for b in built.values())} | {len(template_rows)} | "
                 f"{len(case_rows)} | | |")
    (OUT / "README.md").write_text(README.replace("{counts}", "\n".join(table)), encoding="utf-8", newline="\n")
    print(f"wrote {len(case_rows)} cases, {len(template_rows)} templates, {len(built)} playbooks to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

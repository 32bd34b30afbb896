"""Families that identify what a photo shows: landmark-id, plant-id, bird-id and artwork-id."""

from __future__ import annotations

from .common import Deck, pick, qy, st, tr

# ----------------------------------------------------------------------------------------------------------------
# landmark identification
# ----------------------------------------------------------------------------------------------------------------
LANDMARKS = [
    # name, place, caption, when, designer, look-alike, distinguishing feature
    ("Eiffel Tower", "Paris, France",
     "A tall wrought-iron lattice tower seen from a long lawn, tourists in the foreground, a river on the left.",
     "completed in 1889 for the Exposition Universelle",
     "Gustave Eiffel's company (engineers Maurice Koechlin and Émile Nouguier, architect Stephen Sauvestre)",
     "Tokyo Tower", "brown-grey paint and the Champ de Mars lawn instead of Tokyo Tower's orange-and-white bands"),
    ("Sydney Opera House", "Sydney, Australia",
     "White sail-like shell roofs on a harbour promontory, a steel arch bridge in the background.",
     "opened in 1973", "Jørn Utzon", "Auditorio de Tenerife",
     "the cluster of several shells and the Harbour Bridge behind it"),
    ("Basílica de la Sagrada Família", "Barcelona, Spain",
     "A basilica with many tall perforated spires, construction cranes and an intricately sculpted facade.",
     "under construction since 1882", "Antoni Gaudí (who took over the project in 1883)", "Cologne Cathedral",
     "organic, honeycomb-like spires and the cranes; Cologne's twin Gothic spires are dark and pointed"),
    ("Taj Mahal", "Agra, India",
     "A white marble domed mausoleum with four minarets, reflected in a long rectangular pool.",
     "built between 1632 and 1653", "commissioned by Shah Jahan; chief architect usually credited as Ustad Ahmad "
     "Lahauri", "Bibi Ka Maqbara (Aurangabad)", "the full white-marble facing and the slimmer, taller minarets"),
    ("Golden Gate Bridge", "San Francisco, USA",
     "A red-orange suspension bridge with art-deco towers over a strait, partly covered by fog.",
     "opened in 1937", "chief engineer Joseph Strauss, with Charles Ellis, Leon Moisseiff and architect Irving Morrow",
     "Ponte 25 de Abril (Lisbon)", "the stepped art-deco towers and the Marin headlands; Lisbon's bridge carries a "
     "lower railway deck"),
    ("Colosseum", "Rome, Italy",
     "An elliptical ancient stone amphitheatre with tiers of arches, part of the outer ring missing.",
     "completed in 80 AD under Emperor Titus", "commissioned by Vespasian; the architect is unknown",
     "Arena of Nîmes", "four storeys with the partly collapsed outer ring; Nîmes has two storeys and is intact"),
    ("Petronas Towers", "Kuala Lumpur, Malaysia",
     "Twin steel-clad skyscrapers connected by a skybridge at mid-height, lit up at night.",
     "completed in 1998 and opened in 1999", "César Pelli", "Jin Mao Tower",
     "two identical towers joined by a skybridge"),
    ("Christ the Redeemer", "Rio de Janeiro, Brazil",
     "A large statue with outstretched arms on a mountain summit above a bay city.",
     "completed in 1931", "sculptor Paul Landowski with engineer Heitor da Silva Costa",
     "Cristo Rei (Almada, Portugal)", "the arms held horizontally and Sugarloaf Mountain in the bay"),
    ("Angkor Wat", "Siem Reap, Cambodia",
     "A sandstone temple with five lotus-bud towers behind a moat, reflected in a pond at sunrise.",
     "built in the early 12th century under King Suryavarman II", "built for Suryavarman II; architects unknown",
     "Bayon temple", "the five-tower quincunx silhouette; Bayon is covered with carved faces"),
    ("Atomium", "Brussels, Belgium",
     "A shiny metal structure of nine large spheres connected by tubes, like a magnified crystal cell.",
     "built for the Expo 58 world's fair in 1958", "engineer André Waterkeyn, architects André and Jean Polak",
     "a science-museum sculpture", "the nine-sphere iron-crystal arrangement"),
    ("Tower Bridge", "London, UK",
     "A bascule bridge with two Gothic-style stone towers joined by high walkways over a river.",
     "opened in 1894", "architect Horace Jones and engineer John Wolfe Barry", "London Bridge",
     "the Gothic towers and walkways; London Bridge is a plain concrete span"),
    ("Brandenburg Gate", "Berlin, Germany",
     "A neoclassical sandstone gate with twelve Doric columns topped by a chariot drawn by four horses.",
     "completed in 1791", "Carl Gotthard Langhans", "Siegestor (Munich)",
     "Doric columns and the Quadriga; Munich's Siegestor is a Roman-style triumphal arch"),
]


def fam_landmark(rng):
    good, bad, queries = [], [], []
    kinds = ["where", "when", "designer"]
    deck = Deck(rng)
    for i, (name, place, cap, when, designer, alike, feature) in enumerate(LANDMARKS):
        kind = kinds[i % 3]
        if kind == "where":
            q = deck(kind, ["Where was this photo taken? Name the landmark and the city.",
                            "I found this picture in an old album. What is this place and which city is it in?",
                            "Identify the landmark in the image and tell me the country.",
                            "A friend sent me this travel photo without saying where she is. Which landmark is it?"])
            ans, sub = f"{name}, {place}", "identify a landmark from a photo"
        elif kind == "when":
            q = deck(kind, ["What is this structure, and when was it built?",
                            "Name the building in the picture and the year it was completed or opened.",
                            "How old is the monument in my photo? Please name it too.",
                            "Which landmark is this, and in what year was it finished?"])
            ans, sub = f"{name} ({place}), {when}", "identify a landmark and its construction date"
        else:
            q = deck(kind, ["Who designed the building shown in this photo?",
                            "Who was the architect or engineer behind the structure in this image?",
                            "Whose design is the landmark in this picture?",
                            "I'm writing a caption for this photo - what is the structure and who designed it?"])
            ans, sub = f"{name} ({place}) - {designer}", "identify a landmark and its designer"
        others = pick(rng, [x[0] for x in LANDMARKS if x[0] != name], 1)[0]
        steps = [st("Start with a reverse image search on the whole photo.", "image_search", "image_1 (reverse search)",
                    f"Visually similar: '{name}' (38 matches), '{alike}' (6 matches), '{others}' (1 match)"),
                 st(f"Rule out the look-alike {alike}: check {feature}.", "image_crop",
                    "image_1: crop the most distinctive part of the structure",
                    f"Crop shows {feature.split(';')[0]} - consistent with {name}.")]
        if kind == "where":
            steps.append(st("Confirm the location from an encyclopedic source.", "wikipedia", name,
                            f"{name} is a landmark in {place}; {when}."))
        elif kind == "when":
            steps.append(st("Take the date from the infobox, distinguishing start of construction from completion.",
                            "wikipedia", name, f"{name} ({place}): {when}."))
        else:
            steps.append(st("Get the design credits; the most famous name is not always the designer.",
                            "wikipedia", f"{name} design and construction", f"Design credits: {designer}."))
            steps.append(st("Cross-check the credit on a second source.", "web_search", f"{name} architect designer",
                            f"Official site and heritage listing agree: {designer}."))
        reas = (f"Reverse image search put {name} first but also surfaced {alike}; cropping to the distinctive "
                f"detail ({feature}) settled it before any fact lookup. Facts were taken from the Wikipedia article "
                "rather than search snippets, and for date questions construction start, completion and opening "
                "were kept apart.")
        good.append(tr(q, sub, steps, reas, ans, images=1, caption=cap))
    bad.append(tr("What is this tower and in which city is it?", "identify a landmark from a photo",
                  [st("Reverse image search.", "image_search", "image_1", "Similar: 'Eiffel Tower' (21), "
                      "'Tokyo Tower' (17)"),
                   st("Take the top hit.", "wikipedia", "Eiffel Tower", "Eiffel Tower is in Paris, France.")],
                  "Used the top reverse-image-search hit.", "Eiffel Tower, Paris", images=1,
                  caption="A red-and-white lattice tower lit up at dusk among city office blocks."))
    bad.append(tr("Which building is this, and when was it completed?", "identify a landmark and its construction date",
                  [st("Reverse image search.", "image_search", "image_1", "Similar: 'Taj Mahal' (14), "
                      "'Bibi Ka Maqbara' (12)"),
                   st("Look up the top hit.", "wikipedia", "Taj Mahal", "Taj Mahal, Agra: built 1632-1653.")],
                  "Took the first search result.", "Taj Mahal, completed in 1653", images=1,
                  caption="A domed mausoleum with four minarets; the lower walls are plaster rather than marble, "
                          "dry garden channels in front."))
    queries.append(qy("Which landmark is this and what city am I looking at?", "recognise a famous building",
                      images=1, caption="A slender observation tower with a flying-saucer-shaped top; a snowy "
                                        "volcano is faintly visible in the distance."))
    queries.append(qy("saw this huge domed building w/ 4 minarets on my trip, pinkish walls. what is it and how "
                      "old is it??", "name a monument and its age", images=1))
    queries.append(qy("这张照片里的城堡叫什么名字？是谁下令修建的？", "识别照片中的建筑及其建造者", images=1,
                      lang="zh", caption="白色的童话风格城堡，建在山崖上，周围是森林，远处有雪山。"))
    queries.append(qy("Tell me about this.", "identify a building in a photo", images=1, caption_only=True,
                      caption="Photo of an extremely tall stepped glass skyscraper tapering to a spire, towering over "
                              "a desert city; the sender asks what it is and how tall it is."))
    queries.append(qy("What's the name of the pyramid in this holiday snap, and which civilisation built it?",
                      "recognise an archaeological site from a picture", images=1,
                      caption="A stepped stone pyramid with a staircase on each side and a small temple on top, "
                              "standing on a flat grassy plain."))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# plant identification
# ----------------------------------------------------------------------------------------------------------------
PLANTS = [
    # common, scientific, family, toxic to cats, caption, look-alike, distinguishing feature
    ("Swiss cheese plant", "Monstera deliciosa", "Araceae", True,
     "A large glossy leaf with deep splits and oval holes, in a white pot next to a window.",
     "split-leaf philodendron (Philodendron bipinnatifidum)", "holes (fenestrations) inside the blade, not only lobes"),
    ("Fiddle-leaf fig", "Ficus lyrata", "Moraceae", True,
     "A tall indoor plant with big violin-shaped, leathery leaves with prominent pale veins.",
     "rubber plant (Ficus elastica)", "wavy violin-shaped leaves rather than smooth oval ones"),
    ("Snake plant", "Dracaena trifasciata (syn. Sansevieria trifasciata)", "Asparagaceae", True,
     "Stiff upright sword-shaped leaves with dark green horizontal banding and yellow edges.",
     "Aloe", "flat, non-succulent banded blades without spines"),
    ("Golden pothos", "Epipremnum aureum", "Araceae", True,
     "A trailing vine with heart-shaped leaves marbled green and yellow, hanging from a shelf.",
     "heartleaf philodendron (Philodendron hederaceum)", "thicker, slightly textured leaves with yellow marbling"),
    ("Spider plant", "Chlorophytum comosum", "Asparagaceae", False,
     "Arching narrow leaves with a white central stripe and small plantlets dangling on long stems.",
     "variegated lilyturf", "plantlets hanging from long stolons"),
    ("Oleander", "Nerium oleander", "Apocynaceae", True,
     "A shrub with narrow leathery leaves and clusters of pink five-petalled flowers beside a road.",
     "pink laurel / azalea", "whorls of three lance-shaped leaves and five twisted petals"),
    ("Foxglove", "Digitalis purpurea", "Plantaginaceae", True,
     "A tall spike of tubular purple flowers with spotted throats in a woodland clearing.",
     "comfrey", "one-sided spike of thimble-shaped flowers with spotted throats"),
    ("Calathea orbifolia", "Goeppertia orbifolia (formerly Calathea orbifolia)", "Marantaceae", False,
     "Broad round leaves with pale silver-green stripes between the veins.",
     "peacock plant (Goeppertia makoyana)", "very round leaves with broad silver bands"),
    ("English ivy", "Hedera helix", "Araliaceae", True,
     "A climbing vine with dark green lobed leaves covering a brick wall.",
     "Boston ivy (Parthenocissus tricuspidata)", "evergreen leaves and aerial rootlets instead of tendrils"),
    ("Easter lily", "Lilium longiflorum", "Liliaceae", True,
     "White trumpet-shaped flowers with yellow anthers on a leafy stem in a gift wrap.",
     "peace lily (Spathiphyllum)", "true trumpet flowers with six tepals, not a single white spathe"),
    ("ZZ plant", "Zamioculcas zamiifolia", "Araceae", True,
     "Glossy, waxy, dark-green oval leaflets arranged along upright stems.",
     "jade plant", "pinnate compound leaves from thick rhizomes"),
    ("African violet", "Streptocarpus ionanthus (formerly Saintpaulia ionantha)", "Gesneriaceae", False,
     "Fuzzy rounded leaves in a rosette with small violet flowers in the middle.",
     "Cape primrose", "velvety round leaves in a tight rosette"),
]


def fam_plant(rng):
    good, bad, queries = [], [], []
    deck = Deck(rng)
    for i, (common, sci, fam, toxic, cap, alike, feature) in enumerate(PLANTS):
        kind = ["toxic", "sci", "family"][i % 3]
        tox = "toxic to cats" if toxic else "non-toxic to cats"
        if kind == "toxic":
            q = deck(kind, ["What plant is this, and is it safe to keep around my cat?",
                            "My cat keeps chewing this houseplant. What is it, and is it poisonous to cats?",
                            "We're adopting a kitten. Is the plant in this photo a problem? What is it?",
                            "Identify this plant and tell me if it's toxic to cats."])
            ans, sub = f"{common} ({sci}); {tox} according to the ASPCA list", "identify a plant and its pet toxicity"
        elif kind == "sci":
            q = deck(kind, ["Identify the plant in the photo and give its scientific name.",
                            "What species is this plant? I need the Latin name for a label.",
                            "Bought this at a market without a tag - what's the botanical name?",
                            "What is this plant called, scientifically?"])
            ans, sub = f"{common}, {sci}", "identify a plant species from a photo"
        else:
            q = deck(kind, ["Which plant family does this plant belong to?",
                            "Can you tell me what this is and what botanical family it is in?",
                            "For my herbarium sheet: species and family of the plant in this photo?",
                            "What plant is this and which family is it classified in?"])
            ans, sub = f"{common} ({sci}), family {fam}", "identify a plant and its family"
        steps = [st("Reverse image search the leaf/flower close-up.", "image_search", "image_1 (plant photo)",
                    f"Top matches: {common} ({sci}) 0.81; {alike} 0.64"),
                 st(f"Separate it from {alike} using a diagnostic trait: {feature}.", "image_crop",
                    "image_1: crop leaf attachment and blade", f"Visible: {feature}. Matches {common}.")]
        if kind == "toxic":
            steps.append(st("Check toxicity on the ASPCA toxic/non-toxic plant list, not on a blog.",
                            "browse_webpage", f"aspca.org toxic and non-toxic plants: {common}",
                            f"{common} ({sci}): {'Toxic' if toxic else 'Non-Toxic'} to cats."))
        elif kind == "sci":
            steps.append(st("Confirm the accepted scientific name; houseplant names are often outdated.",
                            "web_search", f"{sci.split(' (')[0]} accepted name POWO",
                            f"Plants of the World Online: accepted name {sci}."))
        else:
            steps.append(st("Look up the family.", "wikipedia", common, f"{common}: {sci}, family {fam}."))
        reas = (f"Reverse image search proposed {common} but {alike} scored close, so a diagnostic trait ({feature}) "
                "was checked on a crop before answering. " +
                ("Toxicity came from the ASPCA list, which is the standard reference for pets."
                 if kind == "toxic" else "The name was checked against a current taxonomic source because many "
                 "houseplants were recently reclassified."))
        good.append(tr(q, sub, steps, reas, ans, images=1, caption=cap))
    bad.append(tr("What is this plant and is it toxic to cats?", "identify a plant and its pet toxicity",
                  [st("Reverse image search.", "image_search", "image_1", "Peace lily (Spathiphyllum) 0.72; "
                      "Easter lily (Lilium longiflorum) 0.70"),
                   st("Check toxicity.", "web_search", "peace lily cats", "Peace lily: mildly toxic, mouth "
                      "irritation.")],
                  "Took the top match and looked up its toxicity.",
                  "Peace lily - only mildly irritating to cats", images=1,
                  caption="White trumpet-shaped flowers with six tepals and orange pollen on a leafy stem."))
    queries.append(qy("Is this plant dangerous for dogs and cats? What is it?", "plant ID plus pet safety",
                      images=1, caption="Feathery arching fronds divided into many small leaflets, in a hanging "
                                        "basket."))
    queries.append(qy("found this growing in my garden, purple spiky flowers, smells nice. what is it?",
                      "name a garden plant", images=1))
    queries.append(qy("这盆植物叫什么？学名是什么？", "识别植物并给出学名", images=1, lang="zh",
                      caption="粗厚肉质的灰绿色叶片呈莲座状排列，叶缘有小锯齿，种在陶土盆里。"))
    queries.append(qy("Help me with this one.", "identify a plant", images=1, caption_only=True,
                      caption="A tall yellow flower head with a dark brown centre on a hairy stem in a field; the "
                              "note asks for the species and plant family."))
    queries.append(qy("What's this shrub with magenta funnel flowers by my porch, and should I worry about my "
                      "kitten?", "identify a shrub and check pet toxicity", images=1))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# bird identification
# ----------------------------------------------------------------------------------------------------------------
BIRDS = [
    # common, scientific, IUCN status, caption, where seen, look-alike, field mark
    ("Northern cardinal", "Cardinalis cardinalis", "Least Concern",
     "A bright red songbird with a pointed crest and black face mask perched on a snowy branch.", "Ohio",
     "summer tanager", "the crest and black mask around a thick red bill"),
    ("Blue jay", "Cyanocitta cristata", "Least Concern",
     "A crested bird with blue upperparts, white underparts and a black necklace at a seed feeder.", "Ontario",
     "Steller's jay", "white face and underparts with a black necklace"),
    ("European robin", "Erithacus rubecula", "Least Concern",
     "A small round bird with an orange-red face and breast and an olive-brown back on a garden fork handle.",
     "Kent, England", "American robin", "small size and orange face (not only breast), seen in Europe"),
    ("American robin", "Turdus migratorius", "Least Concern",
     "A thrush-sized bird with grey-brown back and brick-orange breast pulling a worm out of a lawn.", "Minnesota",
     "European robin", "larger thrush shape, dark head and broken white eye-ring, seen in North America"),
    ("Atlantic puffin", "Fratercula arctica", "Vulnerable",
     "A black-and-white seabird with a large triangular orange, blue and yellow bill on a grassy cliff.",
     "the Faroe Islands", "horned puffin", "grey cheek patch and no fleshy 'horn' above the eye"),
    ("Common kingfisher", "Alcedo atthis", "Least Concern",
     "A small bird with an electric-blue back, orange belly and long dagger bill on a reed over water.",
     "Bavaria", "belted kingfisher", "tiny size, orange underparts and blue back"),
    ("Barn owl", "Tyto alba", "Least Concern",
     "A pale owl with a white heart-shaped face and dark eyes flying low over a field at dusk.", "Norfolk",
     "snowy owl", "heart-shaped facial disc and golden-buff upperparts"),
    ("Bald eagle", "Haliaeetus leucocephalus", "Least Concern",
     "A large raptor with a white head and tail, dark brown body and a hooked yellow bill.", "Alaska",
     "white-tailed eagle", "entirely white head, not just a pale one"),
    ("Great blue heron", "Ardea herodias", "Least Concern",
     "A tall grey-blue wading bird with long legs and an S-curved neck standing in shallow water.", "Florida",
     "grey heron", "rufous thighs and larger size, seen in the Americas"),
    ("Ruby-throated hummingbird", "Archilochus colubris", "Least Concern",
     "A tiny bird with a green back and iridescent red throat hovering at a sugar-water feeder.", "Virginia",
     "rufous hummingbird", "green back and ruby gorget on an eastern-US bird"),
    ("Eurasian hoopoe", "Upupa epops", "Least Concern",
     "A pinkish-brown bird with a black-tipped fan crest and black-and-white barred wings probing the ground.",
     "Andalusia", "African hoopoe", "white bands in the primaries and European location"),
    ("Red-winged blackbird", "Agelaius phoeniceus", "Least Concern",
     "A glossy black bird with red and yellow shoulder patches singing on a cattail.", "Wisconsin",
     "tricolored blackbird", "yellow (not white) lower border on the red epaulet"),
]


def fam_bird(rng):
    good, bad, queries = [], [], []
    deck = Deck(rng)
    for i, (common, sci, status, cap, where, alike, mark) in enumerate(BIRDS):
        kind = ["names", "status", "where"][i % 3]
        if kind == "names":
            q = deck(kind, ["What bird is this? Please give the common and scientific name.",
                            "Can you identify this bird species for my photo caption (common + Latin name)?",
                            "Which species is the bird in my picture?",
                            "Name this bird, please - English and scientific names."])
            ans, sub = f"{common} ({sci})", "identify a bird species from a photo"
        elif kind == "status":
            q = deck(kind, ["Which species is this bird, and what is its IUCN conservation status?",
                            "Identify the bird and tell me whether it is threatened.",
                            "Is the bird in this photo an endangered species? What is it?",
                            "What's this bird and how is it listed on the IUCN Red List?"])
            ans, sub = f"{common} ({sci}); IUCN status: {status}", "identify a bird and its conservation status"
        else:
            q = f"I photographed this bird in {where}. What is it?"
            ans, sub = f"{common} ({sci})", "identify a bird seen at a given location"
        steps = [st("Reverse image search the bird.", "image_search", "image_1 (bird photo)",
                    f"Best matches: {common} ({sci}); {alike}"),
                 st(f"Separate from {alike} using field marks and range: {mark}.", "browse_webpage",
                    f"allaboutbirds.org / ebird species account: {common}",
                    f"Field marks: {mark}. Range includes {where}.")]
        if kind == "status":
            steps.append(st("Read the status from the IUCN Red List entry.", "web_search",
                            f"{sci} IUCN Red List status", f"IUCN Red List: {sci} - {status}."))
        reas = (f"Image search gave {common} with {alike} as the runner-up; the decision rested on field marks "
                f"({mark}) and on whether the sighting location is inside the species' range. The scientific name "
                "and status came from reference sites (eBird / IUCN), not from the image-search captions.")
        good.append(tr(q, sub, steps, reas, ans, images=1, caption=cap))
    bad.append(tr("I took this photo of a bird in my garden in Kent. What is it?",
                  "identify a bird seen at a given location",
                  [st("Reverse image search.", "image_search", "image_1", "American robin; European robin"),
                   st("Look up the top result.", "wikipedia", "American robin", "American robin, Turdus migratorius: "
                      "a thrush of North America.")],
                  "Took the top image match.", "American robin (Turdus migratorius)", images=1,
                  caption="A small round bird with orange face and breast on a fence post."))
    queries.append(qy("What species of bird is in this picture? Common name and scientific name please.",
                      "name a bird from a photograph", images=1,
                      caption="A large parrot with a red body, yellow and blue wing feathers and a long red tail."))
    queries.append(qy("this white owl was sitting on the snow near the airport, what kind is it? is it rare?",
                      "bird ID and rarity", images=1))
    queries.append(qy("我在公园池塘拍到这只鸭子，请问是什么品种？", "识别鸟类", images=1, lang="zh",
                      caption="一只雄鸭，头部是亮绿色，脖子有白色环，胸部栗色，在池塘里游。"))
    queries.append(qy("What's this?", "identify a bird", images=1, caption_only=True,
                      caption="Pale pink wading birds with long legs and bent bills with black tips standing in a "
                              "salt lagoon; the photographer wants the species name and scientific name."))
    queries.append(qy("Spotted a bird with a black-and-white barred back and red cap drumming on an oak in "
                      "Massachusetts - which species?", "identify a woodpecker-like bird seen in a region",
                      images=1))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# artwork identification
# ----------------------------------------------------------------------------------------------------------------
ARTWORKS = [
    # title, artist, date, museum, caption
    ("Mona Lisa", "Leonardo da Vinci", "c. 1503-1519", "the Louvre, Paris",
     "A half-length portrait of a woman with folded hands and a faint smile, a hazy landscape behind her."),
    ("The Starry Night", "Vincent van Gogh", "1889", "the Museum of Modern Art, New York",
     "A swirling night sky with bright stars and a crescent moon over a village, a dark cypress in front."),
    ("Girl with a Pearl Earring", "Johannes Vermeer", "c. 1665", "the Mauritshuis, The Hague",
     "A girl in a blue and yellow turban looking over her shoulder, wearing a large pearl earring."),
    ("The Great Wave off Kanagawa", "Katsushika Hokusai", "c. 1831",
     "several collections (impressions of the woodblock print are held by e.g. the Met and the British Museum)",
     "A woodblock print of a huge clawed wave over three boats, a small snow-capped mountain in the distance."),
    ("The Persistence of Memory", "Salvador Dalí", "1931", "the Museum of Modern Art, New York",
     "Melting pocket watches draped over a branch and a strange sleeping figure in a barren coastal landscape."),
    ("The Night Watch", "Rembrandt van Rijn", "1642", "the Rijksmuseum, Amsterdam",
     "A large dark group portrait of militiamen, a captain in black and a lieutenant in yellow, a girl lit up."),
    ("The Birth of Venus", "Sandro Botticelli", "c. 1484-1486", "the Uffizi Gallery, Florence",
     "A nude woman standing on a giant scallop shell at the shore, wind gods blowing from the left."),
    ("Las Meninas", "Diego Velázquez", "1656", "the Museo del Prado, Madrid",
     "A large room with a young princess and her maids, a painter at a big canvas and a mirror on the back wall."),
    ("The Scream", "Edvard Munch", "1893 (painted version)", "the National Museum, Oslo",
     "A figure with an agonised face holding its head on a bridge under a swirling orange sky."),
    ("American Gothic", "Grant Wood", "1930", "the Art Institute of Chicago",
     "A stern farmer holding a pitchfork beside a woman in front of a white house with a pointed window."),
    ("Guernica", "Pablo Picasso", "1937", "the Museo Reina Sofía, Madrid",
     "A huge black, white and grey cubist scene of screaming people, a bull and a wounded horse."),
    ("The Kiss", "Gustav Klimt", "1907-1908", "the Belvedere, Vienna",
     "A couple embracing, wrapped in golden robes with geometric patterns, kneeling on a flower meadow."),
]


def fam_art(rng):
    good, bad, queries = [], [], []
    deck = Deck(rng)
    for i, (title, artist, when, museum, cap) in enumerate(ARTWORKS):
        kind = ["who_where", "title_year", "museum"][i % 3]
        if kind == "who_where":
            q = deck(kind, ["Who painted this, and where can I see the original?",
                            "Which artist made this picture and which museum holds it?",
                            "Who is the artist of this painting, and is the original on display somewhere?",
                            "Tell me the painter and the current location of this work."])
            ans = f"{title} by {artist} ({when}); original in {museum}"
            sub = "identify an artwork's artist and museum"
        elif kind == "title_year":
            q = deck(kind, ["What is the name of this artwork and when was it made?",
                            "Name this painting and its date.",
                            "What's the title of this picture and roughly what year is it from?",
                            "Which famous artwork is this, and when was it created?"])
            ans, sub = f"{title}, {artist}, {when}", "identify an artwork and its date"
        else:
            q = deck(kind, ["I saw a print of this on a poster. In which museum is the original, and who made it?",
                            "Which museum has the original of this artwork, and who is the artist?",
                            "Where does the original of this picture hang, and who created it?",
                            "I'd like to see this in person - which collection owns it, and who's the artist?"])
            ans, sub = f"{title} by {artist}; held by {museum}", "identify an artwork and where it hangs"
        steps = [st("Reverse image search the artwork; crop away the poster frame first.", "image_search",
                    "image_1 (cropped to the picture area)", f"Matches: '{title}' - {artist} (many results), "
                    "plus parodies and reproductions"),
                 st("Confirm title, artist, date and holding institution from a reference page.", "wikipedia",
                    title, f"{title}, {artist}, {when}. Collection: {museum}.")]
        if "version" in when or "impressions" in museum:
            steps.append(st("The work exists in several versions/impressions; state which one is meant.",
                            "web_search", f"{title} versions which museum",
                            f"Multiple versions exist; the best-known is in {museum.split(' (')[0]}."))
        elif kind != "title_year":
            steps.append(st("Check the holding museum's own collection page (works move or go on loan).",
                            "browse_webpage", f"{museum} - online collection: {title}",
                            f"Object record: {title}, {artist}, {when}; on permanent display."))
        reas = ("Reverse image search on the cropped picture immediately pointed to the work, but results mix "
                "parodies and reproductions, so title, date and location were confirmed on a reference page. For "
                "works with several versions or print impressions the answer names which one is meant.")
        good.append(tr(q, sub, steps, reas, ans, images=1, caption=cap))
    bad.append(tr("Where is the original of this painting displayed?", "identify an artwork and where it hangs",
                  [st("Reverse image search.", "image_search", "image_1", "Matches: 'The Scream' - Edvard Munch"),
                   st("Search museum.", "web_search", "The Scream museum", "Munch Museum, Oslo (snippet)")],
                  "Found the painting and took the museum from the search snippet.", "The Munch Museum, Oslo",
                  images=1, caption="A figure holding its head on a bridge under a red sky, painted in tempera and "
                                    "oil on cardboard."))
    queries.append(qy("Who is the painter of this one and which gallery owns it?", "recognise a painting", images=1,
                      caption="A late-night diner seen through a large window on an empty street corner; three "
                              "customers and a server in white."))
    queries.append(qy("whats the name of this painting w/ all the tiny dots, people in a park by the river?",
                      "name a painting", images=1))
    queries.append(qy("这幅画是谁画的？原作现在收藏在哪里？", "识别画作的作者和收藏地", images=1, lang="zh",
                      caption="一名女子一手举着三色旗、一手持带刺刀的步枪，带领人群越过街垒，地上有倒下的人。"))
    queries.append(qy("Can you identify this for me?", "identify an artwork", images=1, caption_only=True,
                      caption="Photo of a triptych crowded with tiny nude figures, fantastical creatures and giant "
                              "fruit; the user asks for the artist and the museum where it hangs."))
    queries.append(qy("Got a fridge magnet of this painting of water lilies on a pond - who painted it and roughly "
                      "when?", "identify a famous painting and its date", images=1))
    return good, bad, queries
